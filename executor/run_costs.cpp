#include "executor/run_costs.hpp"

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "executor/stage_timer.hpp"

namespace recycle::executor {

planner::Costs run_costs(const RunResult& run, const planner::Costs& timed) {
  using planner::ActionType;
  // (type, virtual stage, or the stage for OPT) -> durations
  std::map<std::pair<ActionType, std::int32_t>, std::vector<Nanos>> durations;
  for (const WorkerRun& w : run.workers) {
    for (const TimedAction& t : w.timeline) {
      if (t.dropped || t.iteration == 0) continue;
      switch (t.action.type) {
        case ActionType::kForward:
        case ActionType::kBackwardInput:
        case ActionType::kBackwardWeight:
        case ActionType::kBackward:
        case ActionType::kOptimizer:
          durations[{t.action.type, t.action.virtual_stage}].push_back(t.work_ns());
          break;
        default:
          break;
      }
    }
  }
  const auto median = [&](ActionType type, std::size_t v) -> std::optional<Nanos> {
    const auto found = durations.find({type, static_cast<std::int32_t>(v)});
    if (found == durations.end()) return std::nullopt;
    return median_of(found->second);
  };
  planner::Costs costs = timed;
  for (std::size_t v = 0; v < costs.virtual_stages.size(); ++v) {
    planner::StageCost& c = costs.virtual_stages[v];
    if (const auto f = median(ActionType::kForward, v)) c.forward = *f;
    const auto i = median(ActionType::kBackwardInput, v);
    const auto w = median(ActionType::kBackwardWeight, v);
    const auto b = median(ActionType::kBackward, v);
    if (!i && !w && b) {
      // Only B ran: split as the timed costs split it.
      const Nanos both = c.backward_input + c.backward_weight;
      const double share =
          both > 0 ? static_cast<double>(c.backward_input) / static_cast<double>(both) : 0.5;
      c.backward_input = static_cast<Nanos>(share * static_cast<double>(*b));
      c.backward_weight = *b - c.backward_input;
    }
    if (i) c.backward_input = *i;
    if (w) c.backward_weight = *w;
  }
  for (std::size_t s = 0; s < costs.optimizer.size(); ++s) {
    if (const auto o = median(ActionType::kOptimizer, s)) costs.optimizer[s] = *o;
  }
  return costs;
}

}  // namespace recycle::executor
