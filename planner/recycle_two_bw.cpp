#include "planner/recycle_two_bw.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/error.hpp"
#include "planner/generators.hpp"
#include "planner/language/semantics.hpp"
#include "planner/language/validator.hpp"
#include "planner/timing/period.hpp"

namespace recycle::planner {

namespace {

/// The key of a compute action among one worker's: (type, virtual stage, owner, micro-batch).
using Key = std::tuple<ActionType, std::int32_t, std::int32_t, std::int32_t>;
Key key_of(const Action& a) {
  return {a.type, a.virtual_stage, a.owner, a.microbatch};
}

/// One worker's list without its flush, as PipeDream-2BW runs 1F1B: its leading forwards (the
/// warm-up) run among the actions `lagged` of the previous iteration (in their order, in units
/// that each start at an I), then the rest of the list. Each forward runs as soon as it fits the
/// memory limit `limit` (chunks; the lagged units' activations are held from the list's start and
/// freed by their Ws), else the next unit first: on a fault-free 1F1B list this is 2BW's pairing
/// of each forward with one backward. `unit_first`: each unit, then one forward if it fits, so
/// the freed activations make room before the forwards take more.
void without_flush(std::vector<Action>& list, const std::set<Key>& lagged, std::int32_t limit,
                   bool unit_first) {
  const auto first_backward = std::find_if(
      list.begin(), list.end(), [](const Action& a) { return a.type != ActionType::kForward; });
  const std::vector<Action> warm(list.begin(), first_backward);
  std::vector<Action> body;
  std::vector<std::vector<Action>> units;
  std::int32_t held = 0;  // the lagged chunks, carried into the list
  for (auto it = first_backward; it != list.end(); ++it) {
    if (!lagged.contains(key_of(*it))) {
      body.push_back(*it);
      continue;
    }
    if (units.empty() || it->type == ActionType::kBackwardInput) units.emplace_back();
    Action a = *it;
    a.lag = 1;
    held -= held_delta(a.type);
    units.back().push_back(a);
  }
  std::vector<Action> out;
  std::size_t f = 0;
  for (const std::vector<Action>& unit : units) {
    if (unit_first) {
      out.insert(out.end(), unit.begin(), unit.end());
      for (const Action& a : unit) held += held_delta(a.type);
      if (f < warm.size() && held < limit) {
        out.push_back(warm[f++]);
        ++held;
      }
      continue;
    }
    for (; f < warm.size() && held < limit; ++f, ++held) out.push_back(warm[f]);
    out.insert(out.end(), unit.begin(), unit.end());
    for (const Action& a : unit) held += held_delta(a.type);
  }
  out.insert(out.end(), warm.begin() + static_cast<std::ptrdiff_t>(f), warm.end());
  out.insert(out.end(), body.begin(), body.end());
  list = std::move(out);
}

/// The synchronous plan `one_iteration` with every list run without its flush (without_flush,
/// `unit_first` as there): lagged are the actions after each worker's last forward, and every
/// action that reads what a lagged one makes (its input is of the same iteration, so it runs no
/// earlier in the lists: data_distance), to a fixed point. Each stage's REDUCE_GRAD and OPT follow
/// its last lagged backward, lagged, when any replica of the stage lags one (replicas all-reduce
/// together), and are implied at the end of the list otherwise.
Schedule overlapped(const Schedule& skeleton, std::vector<WorkerSchedule> one_iteration,
                    const std::vector<std::int32_t>& limit, bool unit_first) {
  Schedule out = skeleton;
  out.workers = std::move(one_iteration);
  out.weight_versions = 2;
  out.staggered_optimizer = true;
  const Layout& layout = out.layout;
  const std::int32_t last = layout.virtual_stages() - 1;
  const RouteTable routes(out);
  std::map<WorkerId, std::size_t> index;
  for (std::size_t w = 0; w < out.workers.size(); ++w) index[out.workers[w].id] = w;
  std::vector<std::set<Key>> lagged(out.workers.size());
  for (std::size_t w = 0; w < out.workers.size(); ++w) {
    const auto& actions = out.workers[w].actions;
    const auto after = std::find_if(actions.rbegin(), actions.rend(), [](const Action& a) {
                         return a.type == ActionType::kForward;
                       }).base();
    for (auto it = after; it != actions.end(); ++it) lagged[w].insert(key_of(*it));
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t w = 0; w < out.workers.size(); ++w) {
      for (const Action& a : out.workers[w].actions) {
        if (lagged[w].contains(key_of(a))) continue;
        for (const DataInput& in : data_inputs(a.type, a.virtual_stage, last)) {
          const std::size_t from =
              in.same_worker ? w
                             : index.at(routes.worker_of(a.owner, in.virtual_stage, a.microbatch));
          const ActionType made =
              in.producer == Producer::kForward ? ActionType::kForward
              : std::any_of(out.workers[from].actions.begin(), out.workers[from].actions.end(),
                            [](const Action& x) { return x.type == ActionType::kBackward; })
                  ? ActionType::kBackward
                  : ActionType::kBackwardInput;
          if (lagged[from].contains({made, in.virtual_stage, a.owner, a.microbatch})) {
            lagged[w].insert(key_of(a));
            changed = true;
            break;
          }
        }
      }
    }
  }
  std::vector<char> stage_lags(static_cast<std::size_t>(layout.pp), 0);
  for (std::size_t w = 0; w < out.workers.size(); ++w) {
    WorkerSchedule& ws = out.workers[w];
    without_flush(ws.actions, lagged[w], limit[static_cast<std::size_t>(ws.id.stage)], unit_first);
    if (std::any_of(ws.actions.begin(), ws.actions.end(),
                    [](const Action& a) { return a.lag != 0 && held_delta(a.type) < 0; }))
      stage_lags[static_cast<std::size_t>(ws.id.stage)] = 1;
  }
  for (WorkerSchedule& w : out.workers) {
    if (!stage_lags[static_cast<std::size_t>(w.id.stage)]) continue;
    const auto after = std::find_if(w.actions.rbegin(), w.actions.rend(), [](const Action& a) {
                         return a.lag;
                       }).base();
    std::vector<Action> step;
    for (const ActionType type : {ActionType::kReduceGrad, ActionType::kOptimizer}) {
      Action a{type, w.id.stage, -1, w.id.dp};
      a.lag = 1;
      step.push_back(a);
    }
    w.actions.insert(after, step.begin(), step.end());
  }
  return out;
}

/// The better of the candidates offered: valid, within the memory limits, by (period, makespan)
/// on the direct network.
struct Best {
  const CostModel& model;
  const std::vector<std::int32_t>& limit;
  std::optional<Schedule> schedule;
  SteadyState estimate;

  void offer(Schedule s) {
    for (const WorkerSchedule& w : s.workers) {
      if (peak_held(w.actions.data(), w.actions.data() + w.actions.size()) >
          limit[static_cast<std::size_t>(w.id.stage)])
        return;
    }
    if (!validate(s).empty()) return;
    const auto st = direct_steady_state(s, model);
    if (!st) return;
    if (schedule &&
        std::tie(st->period, st->makespan) >= std::tie(estimate.period, estimate.makespan))
      return;
    schedule = std::move(s);
    estimate = *st;
  }
};

}  // namespace

Schedule plan_two_bw(const Schedule& skeleton, const CostModel& model,
                     const std::vector<std::int32_t>& limit,
                     std::vector<WorkerSchedule> one_iteration) {
  const Layout& layout = skeleton.layout;
  RECYCLE_ASSERT(layout.interleave == 1, "2bw runs one chunk a worker");
  Best best{model, limit, std::nullopt, {}};
  {
    // The synchronous lists as they are, each stage stepping at the end of its own list.
    Schedule s = skeleton;
    s.workers = one_iteration;
    s.weight_versions = 2;
    s.staggered_optimizer = true;
    best.offer(std::move(s));
    RECYCLE_ASSERT(best.schedule.has_value(), "the synchronous plan is not a valid 2bw plan");
  }
  for (const bool unit_first : {false, true})
    best.offer(overlapped(skeleton, one_iteration, limit, unit_first));
  if (skeleton.failed.empty()) {
    GeneratorOptions generator;
    generator.layout = layout;
    Schedule own = generate_fault_free("2bw", generator);
    own.generator = skeleton.generator;
    best.offer(std::move(own));
  }
  return *std::move(best.schedule);
}

}  // namespace recycle::planner
