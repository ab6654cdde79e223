// What the exact planner's two formulations share (planner/exact_planner.hpp): the ordering
// problem in MILP time units, its bounds, and reading a schedule back from a solution.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <queue>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "planner/language/schedule.hpp"
#include "planner/language/semantics.hpp"
#include "planner/language/timing.hpp"
#include "planner/milp.hpp"

namespace recycle::planner::exact {

inline constexpr double kEps = 1e-6;
inline constexpr double kInf = std::numeric_limits<double>::max();
inline constexpr std::int32_t kKinds = 3;  // F, I, W: action id = 3 * task + kind

inline std::int32_t kind_of(ActionType type) {
  const std::int32_t k = split_index(type);
  RECYCLE_ASSERT(k >= 0, "the exact planner orders only F, I and W");
  return k;
}

inline constexpr ActionType kKindType[kKinds] = {ActionType::kForward, ActionType::kBackwardInput,
                                                 ActionType::kBackwardWeight};

/// One job of the one-worker relaxation: release (earliest start), processing time, tail.
struct Job {
  double release = 0;
  double duration = 0;
  double tail = 0;
};

/// Jackson's preemptive schedule: the optimum of the one-machine relaxation with preemption
/// (1|r,q,pmtn|Cmax), a lower bound on any schedule's makespan.
inline double preemptive_bound(std::vector<Job> jobs) {
  std::sort(jobs.begin(), jobs.end(),
            [](const Job& a, const Job& b) { return a.release < b.release; });
  std::vector<double> left(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j) left[j] = jobs[j].duration;
  std::priority_queue<std::pair<double, std::size_t>> ready;  // by tail, longest first
  double t = 0;
  double bound = 0;
  std::size_t next = 0;
  while (next < jobs.size() || !ready.empty()) {
    if (ready.empty()) t = std::max(t, jobs[next].release);
    while (next < jobs.size() && jobs[next].release <= t + kEps) {
      ready.push({jobs[next].tail, next});
      ++next;
    }
    const std::size_t j = ready.top().second;
    const double until = next < jobs.size() ? jobs[next].release : kInf;
    const double run = std::min(left[j], until - t);
    t += run;
    left[j] -= run;
    if (left[j] <= kEps) {
      ready.pop();
      bound = std::max(bound, t + jobs[j].tail);
    }
  }
  return bound;
}

/// What both formulations share: every action in MILP time units with its time window inside
/// the incumbent's makespan, the workers' action sets, the route symmetry, and a lower bound.
struct Problem {
  struct Act {
    std::int32_t worker = 0;    // index in the incumbent's workers
    std::int32_t position = 0;  // index in the incumbent's list of that worker
    double duration = 0;        // in units, like everything below
    double head = 0;            // longest chain before it: its earliest start
    double tail = 0;            // longest chain after it
    double start = 0;           // in the incumbent
    Action action;
  };

  /// `memory`: chunks of activations a worker may hold (chunk_limit). `known_bound`: a lower
  /// bound on the makespan found elsewhere (planner/order_search.hpp makespan_lower_bound, which
  /// sees the memory limit), in nanoseconds.
  Problem(const Schedule& incumbent_schedule, const Timeline& timeline, const Costs& costs,
          std::int32_t memory, Nanos known_bound)
      : layout(incumbent_schedule.layout), incumbent(incumbent_schedule), limit(memory) {
    choose_unit(costs, timeline.makespan);
    durations(costs);
    collect_actions(timeline);
    precedences();
    symmetric_chains();
    heads_and_tails();
    makespan = static_cast<double>(timeline.makespan) / unit;
    lower_bound = std::max(static_lower_bound(), units_at_least(known_bound));
  }

  [[nodiscard]] const Act& act(std::int32_t id) const { return acts[static_cast<std::size_t>(id)]; }
  [[nodiscard]] std::int32_t id(std::int32_t owner, std::int32_t virtual_stage, std::int32_t mb,
                                std::int32_t kind) const {
    return ((owner * layout.virtual_stages() + virtual_stage) * layout.microbatches + mb) * kKinds +
           kind;
  }
  /// Latest start that still ends the chain through `a` by `horizon`.
  [[nodiscard]] static double latest(const Act& a, double horizon) {
    return horizon - a.tail - a.duration;
  }
  [[nodiscard]] Nanos to_nanos(double units) const {
    return static_cast<Nanos>(std::llround(units * unit));
  }

  Layout layout;
  const Schedule& incumbent;
  std::int32_t limit = 1;                            // chunks of activations per worker
  double unit = 1;                                   // nanoseconds per MILP time unit
  bool integral = true;                              // every cost a whole number of units
  double makespan = 0;                               // the incumbent's
  double lower_bound = 0;                            // critical path and one-worker relaxations
  std::vector<double> p[kKinds];                     // duration per kind, per virtual stage
  std::vector<Act> acts;                             // by action id
  std::vector<std::vector<std::int32_t>> on_worker;  // action ids, ascending
  /// (before, after) action ids: each task's data dependencies (semantics.hpp, data_inputs), the
  /// after action starting once the before one ends; listed so that every action's inputs come
  /// before the pairs where it is the before one (a topological order of each task).
  std::vector<std::pair<std::int32_t, std::int32_t>> precedence;
  /// Interchangeable tasks (the same worker at every stage) in the incumbent's order of their
  /// first forwards, as chains of stage-0 F ids: any order among them may be imposed, and this
  /// one keeps the incumbent a MIP start.
  std::vector<std::vector<std::int32_t>> chains;

 private:
  /// The unit is the gcd of the costs when that keeps numbers small (then every start in an
  /// as-soon-as-possible schedule is a whole number of units), else the smallest cost.
  void choose_unit(const Costs& costs, Nanos incumbent_makespan) {
    Nanos g = 0;
    Nanos smallest = std::numeric_limits<Nanos>::max();
    for (std::int32_t v = 0; v < layout.virtual_stages(); ++v) {
      const StageCost& c = costs.virtual_stages[static_cast<std::size_t>(v)];
      for (const Nanos d : {c.forward, c.backward_input, c.backward_weight}) {
        g = std::gcd(g, d);
        smallest = std::min(smallest, d);
      }
    }
    integral = incumbent_makespan / g <= 1'000'000;
    unit = static_cast<double>(integral ? g : smallest);
  }

  void durations(const Costs& costs) {
    for (std::int32_t k = 0; k < kKinds; ++k) {
      for (std::int32_t v = 0; v < layout.virtual_stages(); ++v) {
        p[k].push_back(static_cast<double>(costs.duration({kKindType[k], v, 0, 0})) / unit);
      }
    }
  }

  void collect_actions(const Timeline& timeline) {
    acts.assign(static_cast<std::size_t>(layout.dp * layout.virtual_stages() * layout.microbatches *
                                         kKinds),
                Act{});
    on_worker.assign(incumbent.workers.size(), {});
    for (std::size_t w = 0; w < incumbent.workers.size(); ++w) {
      const auto& actions = incumbent.workers[w].actions;
      for (std::size_t i = 0; i < actions.size(); ++i) {
        const Action& a = actions[i];
        const std::int32_t k = kind_of(a.type);
        const auto s = static_cast<std::size_t>(a.virtual_stage);
        const std::int32_t n = id(a.owner, a.virtual_stage, a.microbatch, k);
        acts[static_cast<std::size_t>(n)] = {
            static_cast<std::int32_t>(w),
            static_cast<std::int32_t>(i),
            p[k][s],
            0,
            0,
            static_cast<double>(timeline.workers[w][i].start) / unit,
            a};
        on_worker[w].push_back(n);
      }
      std::sort(on_worker[w].begin(), on_worker[w].end());
    }
  }

  /// `nanos` in units, rounded up to a whole unit when the costs are whole units.
  [[nodiscard]] double units_at_least(Nanos nanos) const {
    const double units = static_cast<double>(nanos) / unit;
    return integral ? std::ceil(units - kEps) : units;
  }

  [[nodiscard]] double static_lower_bound() const {
    double bound = 0;
    for (const auto& ids : on_worker) {
      std::vector<Job> jobs;
      for (const std::int32_t n : ids) jobs.push_back({act(n).head, act(n).duration, act(n).tail});
      bound = std::max(bound, preemptive_bound(std::move(jobs)));
    }
    return integral ? std::ceil(bound - kEps) : bound;
  }

  /// The precedence pairs, in each task's order F(0) .. F(last), I(last) .. I(0), then the Ws.
  void precedences() {
    const std::int32_t last = layout.virtual_stages() - 1;
    std::vector<std::pair<std::int32_t, std::int32_t>> order;  // (kind, virtual stage)
    for (std::int32_t v = 0; v <= last; ++v) order.emplace_back(0, v);
    for (std::int32_t v = last; v >= 0; --v) order.emplace_back(1, v);
    for (std::int32_t v = 0; v <= last; ++v) order.emplace_back(2, v);
    for (std::int32_t owner = 0; owner < layout.dp; ++owner) {
      for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
        for (const auto& [kind, v] : order) {
          for (const DataInput& in : data_inputs(kKindType[kind], v, last)) {
            const std::int32_t from = in.producer == Producer::kForward ? 0 : 1;
            precedence.emplace_back(id(owner, in.virtual_stage, mb, from), id(owner, v, mb, kind));
          }
        }
      }
    }
  }

  void symmetric_chains() {
    const RouteTable routes(incumbent);
    std::vector<std::pair<std::vector<std::int32_t>, std::int32_t>> keyed;  // route, stage-0 F id
    for (std::int32_t owner = 0; owner < layout.dp; ++owner) {
      for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
        std::vector<std::int32_t> route;
        for (std::int32_t s = 0; s < layout.pp; ++s) route.push_back(routes.dp_of(owner, s, mb));
        // A task's first F runs where its route puts stage 0 (virtual stage 0 is chunk 0 there).
        keyed.emplace_back(std::move(route), id(owner, 0, mb, 0));
      }
    }
    std::sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
      return std::tie(a.first, act(a.second).position) < std::tie(b.first, act(b.second).position);
    });
    for (std::size_t i = 0; i < keyed.size(); ++i) {
      if (i == 0 || keyed[i].first != keyed[i - 1].first) chains.emplace_back();
      chains.back().push_back(keyed[i].second);
    }
  }

  /// Heads (earliest starts) forward and tails (what must follow) backward along each task's
  /// chain; the k-th of n stage-0 forwards in a symmetry chain has k of them before it and
  /// n - 1 - k after it on its worker.
  void heads_and_tails() {
    const auto each_in_chains = [&](const auto& set) {
      for (const auto& chain : chains) {
        for (std::size_t k = 0; k < chain.size(); ++k) {
          set(acts[static_cast<std::size_t>(chain[k])], static_cast<double>(k),
              static_cast<double>(chain.size() - 1 - k));
        }
      }
    };
    each_in_chains([](Act& f, double earlier, double) { f.head = earlier * f.duration; });
    for (const auto& [first, then] : precedence) {
      Act& a = acts[static_cast<std::size_t>(then)];
      const Act& b = act(first);
      a.head = std::max(a.head, b.head + b.duration);
    }
    for (std::size_t k = precedence.size(); k-- > 0;) {
      const auto& [first, then] = precedence[k];
      Act& a = acts[static_cast<std::size_t>(first)];
      const Act& b = act(then);
      a.tail = std::max(a.tail, b.duration + b.tail);
    }
    each_in_chains([](Act& f, double, double later) { f.tail += later * f.duration; });
  }
};

/// The schedule of a MILP solution: each worker's actions by start (action id on ties).
[[nodiscard]] Schedule extract(const Problem& pr, const std::vector<Linear>& starts,
                               const std::vector<double>& solution);

}  // namespace recycle::planner::exact
