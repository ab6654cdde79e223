#include "planner/exact_planner.hpp"

#include <Cbc_C_Interface.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <queue>
#include <tuple>
#include <utility>

#include "core/deadline.hpp"
#include "core/error.hpp"
#include "planner/period.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/semantics.hpp"
#include "planner/timing.hpp"

namespace recycle::planner {

namespace {

constexpr double kEps = 1e-6;
constexpr double kInf = std::numeric_limits<double>::max();
constexpr std::int32_t kKinds = 3;  // F, I, W: action id = 3 * task + kind

std::int32_t kind_of(ActionType type) {
  const std::int32_t k = split_index(type);
  RECYCLE_ASSERT(k >= 0, "the exact planner orders only F, I and W");
  return k;
}

constexpr ActionType kKindType[kKinds] = {ActionType::kForward, ActionType::kBackwardInput,
                                          ActionType::kBackwardWeight};

struct CbcDeleter {
  void operator()(Cbc_Model* model) const noexcept { Cbc_deleteModel(model); }
};
using CbcModel = std::unique_ptr<Cbc_Model, CbcDeleter>;

/// Columns and rows collected first and handed to CBC in one Cbc_loadProblem (adding rows one
/// by one copies the matrix each time). Each column carries its value in the MIP start.
class LpBuilder {
 public:
  struct Term {
    std::int32_t col = 0;
    double coef = 0;
  };

  std::int32_t add_col(double lb, double ub, double obj, bool integer, double start) {
    lb_.push_back(lb);
    ub_.push_back(ub);
    obj_.push_back(obj);
    integer_.push_back(integer ? 1 : 0);
    start_.push_back(start);
    return static_cast<std::int32_t>(lb_.size()) - 1;
  }

  void add_row(std::vector<Term> terms, double lo, double hi) {
    std::sort(terms.begin(), terms.end(), [](Term a, Term b) { return a.col < b.col; });
    const auto row = static_cast<std::int32_t>(row_lo_.size());
    for (std::size_t i = 0; i < terms.size(); ++i) {
      if (i > 0 && terms[i].col == terms[i - 1].col) {
        entries_.back().coef += terms[i].coef;
        continue;
      }
      entries_.push_back({terms[i].col, row, terms[i].coef});
    }
    row_lo_.push_back(lo);
    row_hi_.push_back(hi);
  }

  [[nodiscard]] double start(std::int32_t col) const {
    return start_[static_cast<std::size_t>(col)];
  }
  [[nodiscard]] std::int32_t integers() const {
    return static_cast<std::int32_t>(std::count(integer_.begin(), integer_.end(), 1));
  }

  /// The model; with `mip_start`, the columns' start values go to CBC as its first solution.
  [[nodiscard]] CbcModel load(bool mip_start) const {
    std::vector<Entry> sorted = entries_;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Entry& a, const Entry& b) { return a.col < b.col; });
    const std::size_t cols = lb_.size();
    std::vector<CoinBigIndex> starts(cols + 1, 0);
    std::vector<int> rows;
    std::vector<double> values;
    rows.reserve(sorted.size());
    values.reserve(sorted.size());
    for (const Entry& e : sorted) {
      ++starts[static_cast<std::size_t>(e.col) + 1];
      rows.push_back(e.row);
      values.push_back(e.coef);
    }
    std::partial_sum(starts.begin(), starts.end(), starts.begin());
    CbcModel model(Cbc_newModel());
    Cbc_loadProblem(model.get(), static_cast<int>(cols), static_cast<int>(row_lo_.size()),
                    starts.data(), rows.data(), values.data(), lb_.data(), ub_.data(), obj_.data(),
                    row_lo_.data(), row_hi_.data());
    Cbc_setObjSense(model.get(), 1);
    std::vector<int> all(cols);
    std::iota(all.begin(), all.end(), 0);
    for (std::size_t c = 0; c < cols; ++c) {
      if (integer_[c]) Cbc_setInteger(model.get(), static_cast<int>(c));
    }
    if (mip_start) Cbc_setMIPStartI(model.get(), static_cast<int>(cols), all.data(), start_.data());
    return model;
  }

 private:
  struct Entry {
    std::int32_t col = 0;
    std::int32_t row = 0;
    double coef = 0;
  };
  std::vector<double> lb_, ub_, obj_, start_;
  std::vector<char> integer_;
  std::vector<double> row_lo_, row_hi_;
  std::vector<Entry> entries_;
};

/// An action's start as constant + sum coef * column, to read it from a solution.
struct Linear {
  double constant = 0;
  std::vector<LpBuilder::Term> terms;

  [[nodiscard]] double value(const double* x) const {
    double v = constant;
    for (const auto& t : terms) v += t.coef * x[t.col];
    return v;
  }
};

/// One job of the one-worker relaxation: release (earliest start), processing time, tail.
struct Job {
  double release = 0;
  double duration = 0;
  double tail = 0;
};

/// Jackson's preemptive schedule: the optimum of the one-machine relaxation with preemption
/// (1|r,q,pmtn|Cmax), a lower bound on any schedule's makespan.
double preemptive_bound(std::vector<Job> jobs) {
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

  Problem(const Schedule& incumbent_schedule, const Timeline& timeline, const Costs& costs,
          std::int32_t memory)
      : layout(incumbent_schedule.layout), incumbent(incumbent_schedule), limit(memory) {
    choose_unit(costs, timeline.makespan);
    durations(costs);
    collect_actions(timeline);
    symmetric_chains();
    heads_and_tails();
    makespan = static_cast<double>(timeline.makespan) / unit;
    lower_bound = static_lower_bound();
  }

  [[nodiscard]] const Act& act(std::int32_t id) const { return acts[static_cast<std::size_t>(id)]; }
  [[nodiscard]] std::int32_t id(std::int32_t owner, std::int32_t stage, std::int32_t mb,
                                std::int32_t kind) const {
    return ((owner * layout.pp + stage) * layout.microbatches + mb) * kKinds + kind;
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
  std::int32_t limit = 1;
  double unit = 1;                                   // nanoseconds per MILP time unit
  bool integral = true;                              // every cost a whole number of units
  double makespan = 0;                               // the incumbent's
  double lower_bound = 0;                            // critical path and one-worker relaxations
  std::vector<double> p[kKinds];                     // duration per kind, per stage
  std::vector<Act> acts;                             // by action id
  std::vector<std::vector<std::int32_t>> on_worker;  // action ids, ascending
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
    for (std::int32_t s = 0; s < layout.pp; ++s) {
      const StageCost& c = costs.virtual_stages[static_cast<std::size_t>(s)];
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
      for (std::int32_t s = 0; s < layout.pp; ++s) {
        p[k].push_back(static_cast<double>(costs.duration({kKindType[k], s, 0, 0})) / unit);
      }
    }
  }

  void collect_actions(const Timeline& timeline) {
    acts.assign(static_cast<std::size_t>(layout.dp * layout.pp * layout.microbatches * kKinds),
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

  [[nodiscard]] double static_lower_bound() const {
    double bound = 0;
    for (const auto& ids : on_worker) {
      std::vector<Job> jobs;
      for (const std::int32_t n : ids) jobs.push_back({act(n).head, act(n).duration, act(n).tail});
      bound = std::max(bound, preemptive_bound(std::move(jobs)));
    }
    return integral ? std::ceil(bound - kEps) : bound;
  }

  void symmetric_chains() {
    const RouteTable routes(incumbent);
    std::vector<std::pair<std::vector<std::int32_t>, std::int32_t>> keyed;  // route, stage-0 F id
    for (std::int32_t owner = 0; owner < layout.dp; ++owner) {
      for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
        std::vector<std::int32_t> route;
        for (std::int32_t s = 0; s < layout.pp; ++s) route.push_back(routes.dp_of(owner, s, mb));
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
    const std::int32_t last = layout.pp - 1;
    for (std::int32_t owner = 0; owner < layout.dp; ++owner) {
      for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
        const auto at = [&](std::int32_t s, std::int32_t k) -> Act& {
          return acts[static_cast<std::size_t>(id(owner, s, mb, k))];
        };
        const auto after = [](const Act& first, Act& then) {
          then.head = std::max(then.head, first.head + first.duration);
        };
        for (std::int32_t s = 1; s <= last; ++s) after(at(s - 1, 0), at(s, 0));
        after(at(last, 0), at(last, 1));
        for (std::int32_t s = last; s-- > 0;) after(at(s + 1, 1), at(s, 1));
        for (std::int32_t s = 0; s <= last; ++s) after(at(s, 1), at(s, 2));
        const auto before = [](Act& first, const Act& then) {
          first.tail = std::max(first.tail, then.duration + then.tail);
        };
        for (std::int32_t s = 0; s <= last; ++s) before(at(s, 1), at(s, 2));
        for (std::int32_t s = 0; s < last; ++s) before(at(s + 1, 1), at(s, 1));
        before(at(last, 0), at(last, 1));
        for (std::int32_t s = last; s-- > 0;) before(at(s, 0), at(s + 1, 0));
      }
    }
    each_in_chains([](Act& f, double, double later) { f.tail += later * f.duration; });
  }
};

/// The disjunctive formulation: a continuous start per action and one binary per pair of actions
/// on a worker (which runs first), with big-Ms from the time windows. Works for any costs.
class DisjunctiveModel {
 public:
  explicit DisjunctiveModel(const Problem& problem) : pr_(problem) {}

  /// Adds the model; returns each action's start, by action id.
  std::vector<Linear> build(LpBuilder& lp) {
    cmax_ = lp.add_col(pr_.lower_bound, pr_.makespan, 1, false, pr_.makespan);
    col_.assign(pr_.acts.size(), -1);
    std::vector<Linear> starts(pr_.acts.size());
    for (std::size_t n = 0; n < pr_.acts.size(); ++n) {
      const auto& a = pr_.acts[n];
      col_[n] = lp.add_col(a.head, pr_.latest(a, pr_.makespan), 0, false, a.start);
      starts[n] = {0, {{col_[n], 1}}};
    }
    add_precedence(lp);
    chain_of_.assign(pr_.acts.size(), {-1, -1});
    for (std::size_t c = 0; c < pr_.chains.size(); ++c) {
      const auto& chain = pr_.chains[c];
      for (std::size_t k = 0; k < chain.size(); ++k) {
        chain_of_[static_cast<std::size_t>(chain[k])] = {static_cast<std::int32_t>(c),
                                                         static_cast<std::int32_t>(k)};
      }
    }
    for (const auto& ids : pr_.on_worker) {
      const std::vector<Before> before = add_orders(lp, ids);
      add_load_cuts(lp, ids, before);
      add_memory(lp, ids, before);
    }
    return starts;
  }

 private:
  /// Whether one action runs before another on their worker: constant + coef * x[col], with at
  /// most one order binary (col -1: a constant).
  struct Before {
    double constant = 0;
    std::int32_t col = -1;
    double coef = 0;
  };

  [[nodiscard]] std::int32_t col(std::int32_t n) const { return col_[static_cast<std::size_t>(n)]; }

  /// Each task's chain F(0) .. F(pp-1), I(pp-1) .. I(0), W after I; the makespan after every W.
  void add_precedence(LpBuilder& lp) {
    const auto after = [&](std::int32_t from, std::int32_t to) {
      lp.add_row({{col(to), 1}, {col(from), -1}}, pr_.act(from).duration, kInf);
    };
    const std::int32_t last = pr_.layout.pp - 1;
    for (std::int32_t owner = 0; owner < pr_.layout.dp; ++owner) {
      for (std::int32_t mb = 0; mb < pr_.layout.microbatches; ++mb) {
        const auto id = [&](std::int32_t s, std::int32_t k) { return pr_.id(owner, s, mb, k); };
        for (std::int32_t s = 1; s <= last; ++s) after(id(s - 1, 0), id(s, 0));
        after(id(last, 0), id(last, 1));
        for (std::int32_t s = last; s-- > 0;) after(id(s + 1, 1), id(s, 1));
        for (std::int32_t s = 0; s <= last; ++s) {
          after(id(s, 1), id(s, 2));
          lp.add_row({{cmax_, 1}, {col(id(s, 2)), -1}}, pr_.act(id(s, 2)).duration, kInf);
        }
      }
    }
  }

  /// Orders every pair of actions on one worker: fixed when one task's chain, the route symmetry
  /// or the time windows decide it, else one binary. Returns the n x n matrix "i runs before j"
  /// over the worker's actions `ids`.
  std::vector<Before> add_orders(LpBuilder& lp, const std::vector<std::int32_t>& ids) {
    const std::size_t n = ids.size();
    std::vector<Before> before(n * n);
    const auto order = [&](std::size_t first, std::size_t second, bool row) {
      before[first * n + second] = {1, -1, 0};
      before[second * n + first] = {0, -1, 0};
      if (row)
        lp.add_row({{col(ids[second]), 1}, {col(ids[first]), -1}}, pr_.act(ids[first]).duration,
                   kInf);
    };
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = i + 1; j < n; ++j) {
        const auto& a = pr_.act(ids[i]);
        const auto& b = pr_.act(ids[j]);
        if (ids[i] / kKinds == ids[j] / kKinds) {  // one task: F, I, W, already chained
          order(i, j, false);
          continue;
        }
        const auto [chain_a, ka] = chain_of_[static_cast<std::size_t>(ids[i])];
        const auto [chain_b, kb] = chain_of_[static_cast<std::size_t>(ids[j])];
        if (chain_a >= 0 && chain_a == chain_b) {  // interchangeable: keep the chain's order
          ka < kb ? order(i, j, true) : order(j, i, true);
          continue;
        }
        const bool a_first = a.head + a.duration <= pr_.latest(b, pr_.makespan) + kEps;
        const bool b_first = b.head + b.duration <= pr_.latest(a, pr_.makespan) + kEps;
        RECYCLE_ASSERT(a_first || b_first, "the incumbent breaks its own time windows");
        if (!b_first || !a_first) {
          a_first ? order(i, j, true) : order(j, i, true);
          continue;
        }
        // y = 1: a before b. Each big-M is the most the other order could be violated by.
        const std::int32_t y = lp.add_col(0, 1, 0, true, a.position < b.position ? 1 : 0);
        const double m_ab = pr_.latest(a, pr_.makespan) + a.duration - b.head;
        const double m_ba = pr_.latest(b, pr_.makespan) + b.duration - a.head;
        lp.add_row({{col(ids[j]), 1}, {col(ids[i]), -1}, {y, -m_ab}}, a.duration - m_ab, kInf);
        lp.add_row({{col(ids[i]), 1}, {col(ids[j]), -1}, {y, m_ba}}, b.duration, kInf);
        before[i * n + j] = {0, y, 1};
        before[j * n + i] = {1, y, -1};
      }
    }
    return before;
  }

  /// Valid cuts that let the relaxation see a worker's load: whatever runs after an action ends
  /// by the makespan, whatever runs before it starts no earlier than the worker's first release.
  void add_load_cuts(LpBuilder& lp, const std::vector<std::int32_t>& ids,
                     const std::vector<Before>& before) {
    const std::size_t n = ids.size();
    double earliest = kInf;
    for (const std::int32_t id : ids) earliest = std::min(earliest, pr_.act(id).head);
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<LpBuilder::Term> tail{{cmax_, 1}, {col(ids[i]), -1}};
      std::vector<LpBuilder::Term> head{{col(ids[i]), 1}};
      double tail_rhs = pr_.act(ids[i]).duration;
      double head_rhs = earliest;
      for (std::size_t j = 0; j < n; ++j) {
        if (j == i) continue;
        const double d = pr_.act(ids[j]).duration;
        const Before& later = before[i * n + j];
        tail_rhs += d * later.constant;
        if (later.col >= 0) tail.push_back({later.col, -d * later.coef});
        const Before& earlier = before[j * n + i];
        head_rhs += d * earlier.constant;
        if (earlier.col >= 0) head.push_back({earlier.col, -d * earlier.coef});
      }
      lp.add_row(std::move(tail), tail_rhs, kInf);
      lp.add_row(std::move(head), head_rhs, kInf);
    }
  }

  /// When F(b) starts, the worker holds b and every other micro-batch a with F(a) before F(b)
  /// before W(a): 1 + sum_a [F(a) < F(b)] * [F(b) < W(a)] <= limit, each product linearized by a
  /// continuous z >= both orders - 1 wherever neither order is fixed.
  void add_memory(LpBuilder& lp, const std::vector<std::int32_t>& ids,
                  const std::vector<Before>& before) {
    const std::size_t n = ids.size();
    if (static_cast<std::int32_t>(n) / kKinds <= pr_.limit) return;
    const auto local = [&](std::int32_t id) {
      return static_cast<std::size_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
    };
    const auto value = [&](const Before& o) {
      return o.constant + (o.col >= 0 ? o.coef * lp.start(o.col) : 0);
    };
    for (std::size_t fb = 0; fb < n; ++fb) {
      if (pr_.act(ids[fb]).action.type != ActionType::kForward) continue;
      std::vector<LpBuilder::Term> row;
      double held = 1;
      for (std::size_t fa = 0; fa < n; ++fa) {
        if (fa == fb || pr_.act(ids[fa]).action.type != ActionType::kForward) continue;
        const Before& o1 = before[fa * n + fb];                  // F(a) before F(b)
        const Before& o2 = before[fb * n + local(ids[fa] + 2)];  // F(b) before W(a)
        if ((o1.col < 0 && o1.constant < 0.5) || (o2.col < 0 && o2.constant < 0.5)) continue;
        if (o1.col < 0 || o2.col < 0) {  // one order is certain: the term is the other one
          const Before& o = o1.col < 0 ? o2 : o1;
          held += o.constant;
          if (o.col >= 0) row.push_back({o.col, o.coef});
          continue;
        }
        const std::int32_t z = lp.add_col(0, 1, 0, false, std::max(0.0, value(o1) + value(o2) - 1));
        lp.add_row({{z, 1}, {o1.col, -o1.coef}, {o2.col, -o2.coef}}, o1.constant + o2.constant - 1,
                   kInf);
        row.push_back({z, 1});
      }
      if (row.empty()) {
        RECYCLE_ASSERT(held <= pr_.limit + kEps, "the incumbent breaks the memory limit");
        continue;
      }
      lp.add_row(std::move(row), -kInf, pr_.limit - held);
    }
  }

  const Problem& pr_;
  std::int32_t cmax_ = -1;
  std::vector<std::int32_t> col_;                                // start column by action id
  std::vector<std::pair<std::int32_t, std::int32_t>> chain_of_;  // symmetry chain and place, or -1
};

/// The time-indexed formulation (step variables) of "is there a schedule that ends by
/// `horizon`?": z(a, t) = 1 when action a has started by whole time unit t, for t in its window.
/// Needs whole-unit costs (then some optimal schedule starts everything on whole units). Its
/// relaxation sees each worker's load over time, which the disjunctive big-Ms hide.
class TimeIndexedModel {
 public:
  TimeIndexedModel(const Problem& problem, std::int64_t horizon) : pr_(problem) {
    for (const auto& a : pr_.acts) {
      lo_.push_back(std::llround(a.head));
      hi_.push_back(std::llround(Problem::latest(a, static_cast<double>(horizon))));
    }
  }

  /// How many binaries the model has (one per action and whole unit of its window).
  [[nodiscard]] std::int64_t binaries() const {
    std::int64_t total = 0;
    for (std::size_t n = 0; n < lo_.size(); ++n)
      total += std::max<std::int64_t>(0, hi_[n] - lo_[n]);
    return total;
  }

  /// Adds the model; returns each action's start, by action id, or nothing when the windows
  /// alone rule the horizon out (then what was added is to be dropped).
  std::vector<Linear> build(LpBuilder& lp) {
    for (std::size_t n = 0; n < lo_.size(); ++n) {
      if (hi_[n] < lo_[n]) return {};
    }
    first_.assign(pr_.acts.size(), -1);
    std::vector<Linear> starts(pr_.acts.size());
    for (std::size_t n = 0; n < pr_.acts.size(); ++n) {
      starts[n].constant = static_cast<double>(hi_[n]);  // start = hi - sum of z over the window
      for (std::int64_t t = lo_[n]; t < hi_[n]; ++t) {
        const std::int32_t c = lp.add_col(0, 1, 0, true, 0);
        if (t == lo_[n]) first_[n] = c;
        if (t > lo_[n]) lp.add_row({{c - 1, 1}, {c, -1}}, -kInf, 0);  // started stays started
        starts[n].terms.push_back({c, -1});
      }
    }
    add_precedence(lp);
    for (const auto& ids : pr_.on_worker) {
      add_capacity(lp, ids);
      add_memory(lp, ids);
    }
    add_symmetry(lp);
    if (infeasible_) return {};
    return starts;
  }

 private:
  /// Adds coef * z(n, t) to `terms` (z is 0 before the window and 1 after it: those go to
  /// `constant`).
  void add(std::vector<LpBuilder::Term>& terms, double& constant, double coef, std::int32_t n,
           std::int64_t t) const {
    const auto i = static_cast<std::size_t>(n);
    if (t < lo_[i]) return;
    if (t >= hi_[i]) {
      constant += coef;
      return;
    }
    terms.push_back({first_[i] + static_cast<std::int32_t>(t - lo_[i]), coef});
  }
  [[nodiscard]] std::int64_t units(std::int32_t n) const {
    return std::llround(pr_.act(n).duration);
  }

  /// sum terms <= bound; with no terms left, a bound below zero means no schedule fits.
  void limit_row(LpBuilder& lp, std::vector<LpBuilder::Term> terms, double bound) {
    if (!terms.empty()) {
      lp.add_row(std::move(terms), -kInf, bound);
    } else if (bound < -kEps) {
      infeasible_ = true;
    }
  }

  /// started(b, t) <= started(a, t - gap) for every t in b's window.
  void started_before(LpBuilder& lp, std::int32_t a, std::int32_t b, std::int64_t gap) {
    const auto i = static_cast<std::size_t>(b);
    for (std::int64_t t = lo_[i]; t <= hi_[i]; ++t) {
      std::vector<LpBuilder::Term> terms;
      double constant = 0;
      add(terms, constant, 1, b, t);
      add(terms, constant, -1, a, t - gap);
      if (constant < -0.5) continue;  // a surely started by then
      limit_row(lp, std::move(terms), -constant);
    }
  }

  /// Each task's chain: F(0) .. F(pp-1), I(pp-1) .. I(0), W after I, each after the previous ends.
  void add_precedence(LpBuilder& lp) {
    const std::int32_t last = pr_.layout.pp - 1;
    for (std::int32_t owner = 0; owner < pr_.layout.dp; ++owner) {
      for (std::int32_t mb = 0; mb < pr_.layout.microbatches; ++mb) {
        const auto after = [&](std::int32_t s0, std::int32_t k0, std::int32_t s1, std::int32_t k1) {
          const std::int32_t a = pr_.id(owner, s0, mb, k0);
          started_before(lp, a, pr_.id(owner, s1, mb, k1), units(a));
        };
        for (std::int32_t s = 1; s <= last; ++s) after(s - 1, 0, s, 0);
        after(last, 0, last, 1);
        for (std::int32_t s = last; s-- > 0;) after(s + 1, 1, s, 1);
        for (std::int32_t s = 0; s <= last; ++s) after(s, 1, s, 2);
      }
    }
  }

  /// At most one action runs on a worker in each unit: sum of started(a, t) - started(a, t - p(a)).
  void add_capacity(LpBuilder& lp, const std::vector<std::int32_t>& ids) {
    std::int64_t from = std::numeric_limits<std::int64_t>::max();
    std::int64_t to = 0;
    for (const std::int32_t n : ids) {
      from = std::min(from, lo_[static_cast<std::size_t>(n)]);
      to = std::max(to, hi_[static_cast<std::size_t>(n)] + units(n));
    }
    for (std::int64_t t = from; t < to; ++t) {
      std::vector<LpBuilder::Term> terms;
      double constant = 0;
      for (const std::int32_t n : ids) {
        add(terms, constant, 1, n, t);
        add(terms, constant, -1, n, t - units(n));
      }
      limit_row(lp, std::move(terms), 1 - constant);
    }
  }

  /// Micro-batches held when unit t begins: Fs started by t minus Ws ended by t, at most limit.
  void add_memory(LpBuilder& lp, const std::vector<std::int32_t>& ids) {
    if (static_cast<std::int32_t>(ids.size()) / kKinds <= pr_.limit) return;
    std::int64_t from = std::numeric_limits<std::int64_t>::max();
    std::int64_t to = 0;
    for (const std::int32_t n : ids) {
      if (pr_.act(n).action.type != ActionType::kForward) continue;
      from = std::min(from, lo_[static_cast<std::size_t>(n)]);
      to = std::max(to, hi_[static_cast<std::size_t>(n)]);
    }
    for (std::int64_t t = from; t <= to; ++t) {
      std::vector<LpBuilder::Term> terms;
      double constant = 0;
      for (const std::int32_t n : ids) {
        const ActionType type = pr_.act(n).action.type;
        if (type == ActionType::kForward) add(terms, constant, 1, n, t);
        if (type == ActionType::kBackwardWeight) add(terms, constant, -1, n, t - units(n));
      }
      limit_row(lp, std::move(terms), pr_.limit - constant);
    }
  }

  /// Interchangeable tasks start in chain order: the later one started by t means the earlier
  /// one started by t - p (they share the stage-0 worker).
  void add_symmetry(LpBuilder& lp) {
    for (const auto& chain : pr_.chains) {
      for (std::size_t k = 1; k < chain.size(); ++k)
        started_before(lp, chain[k - 1], chain[k], units(chain[k - 1]));
    }
  }

  const Problem& pr_;
  std::vector<std::int64_t> lo_, hi_;  // window of each action's start, whole units
  std::vector<std::int32_t> first_;    // column of z(n, lo), by action id
  bool infeasible_ = false;            // a row without columns cannot hold
};

/// Above this many binaries the time-indexed model is too big to build; the disjunctive one is
/// used instead.
constexpr std::int64_t kMaxTimeIndexedBinaries = 400'000;

/// The schedule of a MILP solution: each worker's actions by start (action id on ties).
Schedule extract(const Problem& pr, const std::vector<Linear>& starts,
                 const std::vector<double>& solution) {
  Schedule out = pr.incumbent;
  for (std::size_t w = 0; w < pr.on_worker.size(); ++w) {
    std::vector<std::pair<std::int64_t, std::int32_t>> keyed;
    for (const std::int32_t n : pr.on_worker[w]) {
      keyed.emplace_back(
          std::llround(starts[static_cast<std::size_t>(n)].value(solution.data()) / kEps), n);
    }
    std::sort(keyed.begin(), keyed.end());
    auto& actions = out.workers[w].actions;
    actions.clear();
    for (const auto& [start, n] : keyed) actions.push_back(pr.act(n).action);
  }
  return out;
}

/// What one CBC run found.
struct CbcOutcome {
  enum class Status { kSolved, kInfeasible, kStopped } status = Status::kStopped;
  std::vector<double> solution;  ///< the best one found; empty if none
  double objective = 0;
  double bound = 0;  ///< best possible objective
};

using Clock = std::chrono::steady_clock;

Seconds left(Clock::time_point deadline) {
  return std::chrono::duration<Seconds>(deadline - Clock::now()).count();
}

CbcOutcome solve_cbc(const LpBuilder& lp, bool mip_start, Seconds seconds, double allowable_gap) {
  const CbcModel model = lp.load(mip_start);
  Cbc_setLogLevel(model.get(), 0);
  Cbc_setParameter(model.get(), "timeMode", "elapsed");
  // Clp's presolve can spin for many minutes on the time-indexed relaxation, and no time limit
  // reaches it there.
  Cbc_setParameter(model.get(), "presolve", "off");
  Cbc_setMaximumSeconds(model.get(), std::max(seconds, 0.01));
  Cbc_setAllowableGap(model.get(), allowable_gap);
  Cbc_solve(model.get());
  CbcOutcome out;
  out.bound = Cbc_getBestPossibleObjValue(model.get());
  if (const double* best = Cbc_bestSolution(model.get())) {
    out.solution.assign(best, best + Cbc_getNumCols(model.get()));
    out.objective = Cbc_getObjValue(model.get());
  }
  if (Cbc_isProvenOptimal(model.get()) && !out.solution.empty()) {
    out.status = CbcOutcome::Status::kSolved;
  } else if (Cbc_isProvenInfeasible(model.get())) {
    out.status = CbcOutcome::Status::kInfeasible;
  }
  return out;
}

/// The outcome as bytes, to cross from the solving process: status, objective, bound, solution.
std::string encode(const CbcOutcome& o) {
  std::string out;
  const auto put = [&](const void* p, std::size_t n) {
    if (n > 0) out.append(static_cast<const char*>(p), n);
  };
  const auto status = static_cast<std::int32_t>(o.status);
  const auto n = static_cast<std::uint64_t>(o.solution.size());
  put(&status, sizeof status);
  put(&o.objective, sizeof o.objective);
  put(&o.bound, sizeof o.bound);
  put(&n, sizeof n);
  put(o.solution.data(), o.solution.size() * sizeof(double));
  return out;
}

CbcOutcome decode(const std::string& bytes) {
  CbcOutcome o;
  std::size_t at = 0;
  const auto get = [&](void* p, std::size_t n) {
    RECYCLE_ASSERT(at + n <= bytes.size(), "a short answer from the solving process");
    if (n > 0) std::memcpy(p, bytes.data() + at, n);  // an empty solution has no data()
    at += n;
  };
  std::int32_t status = 0;
  std::uint64_t n = 0;
  get(&status, sizeof status);
  get(&o.objective, sizeof o.objective);
  get(&o.bound, sizeof o.bound);
  get(&n, sizeof n);
  RECYCLE_ASSERT(n <= bytes.size() / sizeof(double), "a short answer from the solving process");
  o.solution.resize(static_cast<std::size_t>(n));
  get(o.solution.data(), o.solution.size() * sizeof(double));
  o.status = static_cast<CbcOutcome::Status>(status);
  return o;
}

/// CBC stops its search at its own limit, but its first LP solve never looks at the clock: the
/// solve runs in a child process that is killed a quarter second after the deadline, which then
/// counts as stopped with nothing found.
CbcOutcome run_cbc(const LpBuilder& lp, bool mip_start, Clock::time_point deadline,
                   double allowable_gap) {
  const auto bytes =
      run_until([&] { return encode(solve_cbc(lp, mip_start, left(deadline), allowable_gap)); },
                deadline + std::chrono::milliseconds(250));
  return bytes ? decode(*bytes) : CbcOutcome{};
}

/// Whether the time-indexed model fits (asked for the largest horizon it would be built for).
bool time_indexed_fits(const Problem& pr) {
  return pr.integral &&
         TimeIndexedModel(pr, std::llround(pr.makespan) - 1).binaries() <= kMaxTimeIndexedBinaries;
}

/// Time-indexed, from below: is there a schedule ending by H, for H = lower bound, +1, ... up
/// to the incumbent's makespan? The first H that has one is optimal; each H that has none
/// raises the proven lower bound.
void solve_time_indexed(const Problem& pr, Clock::time_point deadline, ExactResult& out) {
  const auto incumbent = std::llround(pr.makespan);
  out.formulation = Formulation::kTimeIndexed;
  for (auto horizon = std::llround(pr.lower_bound); horizon < incumbent; ++horizon) {
    out.lower_bound = pr.to_nanos(static_cast<double>(horizon));  // every shorter one has none
    if (left(deadline) <= 0) return;
    LpBuilder lp;
    const std::vector<Linear> starts = TimeIndexedModel(pr, horizon).build(lp);
    if (starts.empty()) continue;  // an empty window: no schedule ends by this horizon
    out.binaries = std::max(out.binaries, lp.integers());
    const CbcOutcome found = run_cbc(lp, false, deadline, 0);
    if (found.status == CbcOutcome::Status::kStopped) return;
    if (found.status == CbcOutcome::Status::kInfeasible) continue;
    out.schedule = extract(pr, starts, found.solution);
    out.objective = out.lower_bound;
    out.optimal = true;
    return;
  }
  out.lower_bound = pr.to_nanos(pr.makespan);  // no shorter schedule: the incumbent is optimal
  out.optimal = true;
}

/// Disjunctive, from above: minimize the makespan from the incumbent.
void solve_disjunctive(const Problem& pr, Clock::time_point deadline, ExactResult& out) {
  out.formulation = Formulation::kDisjunctive;
  LpBuilder lp;
  const std::vector<Linear> starts = DisjunctiveModel(pr).build(lp);
  out.binaries = lp.integers();
  // With whole-unit costs every makespan is a whole number of units: a bound within one unit of
  // the incumbent proves it optimal.
  const CbcOutcome found = run_cbc(lp, true, deadline, pr.integral ? 1 - kEps : 0);
  double bound = std::max(pr.lower_bound, found.bound);
  if (!found.solution.empty()) {
    out.schedule = extract(pr, starts, found.solution);
    out.objective = pr.to_nanos(found.objective);
  }
  if (found.status == CbcOutcome::Status::kSolved) {
    out.optimal = true;
    bound = found.objective;
  }
  if (pr.integral) bound = std::ceil(bound - kEps);
  out.lower_bound = pr.to_nanos(bound);
}

Costs checked_costs(const ExactOptions& options) {
  const Layout& layout = options.layout;
  Costs costs = options.costs.virtual_stages.empty()
                    ? Costs::uniform(layout.virtual_stages(), {1, 1, 1})
                    : options.costs;
  RECYCLE_ASSERT(static_cast<std::int32_t>(costs.virtual_stages.size()) >= layout.pp,
                 "costs for fewer stages than the pipeline has");
  for (std::int32_t s = 0; s < layout.pp; ++s) {
    const StageCost& c = costs.virtual_stages[static_cast<std::size_t>(s)];
    if (c.forward <= 0 || c.backward_input <= 0 || c.backward_weight <= 0) {
      throw InputError("--costs", "the exact planner needs positive F, I and W times; stage " +
                                      std::to_string(s) + " has a zero");
    }
  }
  return costs;
}

}  // namespace

std::string_view formulation_name(Formulation formulation) noexcept {
  switch (formulation) {
    case Formulation::kAuto:
      return "auto";
    case Formulation::kTimeIndexed:
      return "time-indexed";
    case Formulation::kDisjunctive:
      return "disjunctive";
  }
  return "?";
}

ExactResult plan_exact(const ExactOptions& options) {
  const auto started = Clock::now();
  RECYCLE_ASSERT(options.layout.interleave == 1, "the exact planner needs interleave 1");
  const Costs costs = checked_costs(options);
  const CostModel model = CostModel::compute_only(costs);
  const std::int32_t limit = options.memory_limit.value_or(options.layout.pp);
  RecycleOptions heuristic_options;
  heuristic_options.layout = options.layout;
  heuristic_options.failed = options.failed;
  heuristic_options.model = model;
  heuristic_options.memory_limit = limit;
  heuristic_options.staggered_optimizer = options.staggered_optimizer;
  heuristic_options.search_work = options.search_work;
  const RecyclePlan heuristic = plan_recycle(heuristic_options);
  ExactResult result;
  if (!heuristic.feasible) {
    result.reason = heuristic.reason;
    return result;
  }
  const auto timeline = compute_timeline(heuristic.schedule, costs);
  RECYCLE_ASSERT(timeline.has_value(), "the heuristic's schedule deadlocks");
  result.feasible = true;
  result.heuristic_makespan = timeline->makespan;
  result.heuristic_period = heuristic.estimate.period;

  const Problem problem(heuristic.schedule, *timeline, costs, limit);
  const auto deadline = started + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<Seconds>(options.time_limit));
  Formulation formulation = options.formulation;
  if (formulation == Formulation::kAuto) {
    formulation =
        time_indexed_fits(problem) ? Formulation::kTimeIndexed : Formulation::kDisjunctive;
  }
  if (formulation == Formulation::kTimeIndexed && !problem.integral) {
    throw InputError(
        "--exact",
        "the time-indexed formulation needs costs that are small multiples of one grain");
  }
  if (problem.lower_bound >= problem.makespan - kEps) {
    result.optimal = true;  // the incumbent meets a lower bound: nothing to solve
  } else if (formulation == Formulation::kTimeIndexed) {
    solve_time_indexed(problem, deadline, result);
  } else {
    solve_disjunctive(problem, deadline, result);
  }
  const bool from_milp = !result.schedule.workers.empty();
  if (!from_milp) result.schedule = heuristic.schedule;
  result.schedule.staggered_optimizer = options.staggered_optimizer;
  const auto exact_timeline = compute_timeline(result.schedule, costs);
  RECYCLE_ASSERT(exact_timeline.has_value(), "the exact schedule deadlocks");
  result.makespan = exact_timeline->makespan;
  if (from_milp) result.milp_makespan = result.makespan;
  const auto exact_period = direct_steady_state(result.schedule, model);
  RECYCLE_ASSERT(exact_period.has_value(), "the exact schedule deadlocks");
  result.period = exact_period->period;
  // The MILP minimizes the makespan; the plan is judged by (period, makespan): keep the
  // heuristic's when the MILP's is not better.
  if (std::tie(result.period, result.makespan) >
      std::tie(result.heuristic_period, result.heuristic_makespan)) {
    result.schedule = heuristic.schedule;
    result.makespan = result.heuristic_makespan;
    result.period = result.heuristic_period;
    if (result.objective > result.makespan) result.objective = result.makespan;
  }
  if (result.objective == 0) result.objective = result.makespan;
  if (result.optimal) result.lower_bound = std::min(result.objective, result.makespan);
  result.lower_bound = std::max(result.lower_bound, problem.to_nanos(problem.lower_bound));
  result.schedule.generator = "exact";
  result.solve_seconds = std::chrono::duration<Seconds>(Clock::now() - started).count();
  return result;
}

}  // namespace recycle::planner
