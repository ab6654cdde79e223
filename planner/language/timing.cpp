#include "planner/language/timing.hpp"

#include <algorithm>

namespace recycle::planner {

std::optional<Timeline> compute_timeline(const Schedule& schedule, const DurationFn& duration) {
  GraphOptions options;
  options.staggered_optimizer = schedule.staggered_optimizer;
  const ExecutionGraph graph(schedule, duration, options);
  if (!graph.ordered()) return std::nullopt;
  const auto n = static_cast<std::size_t>(graph.nodes());
  std::vector<Nanos> start(n), end(n);
  graph.sweep({}, start, end);

  Timeline timeline;
  timeline.workers.reserve(schedule.workers.size());
  for (std::size_t w = 0; w < schedule.workers.size(); ++w) {
    std::vector<ActionTime>& times =
        timeline.workers.emplace_back(schedule.workers[w].actions.size());
    for (std::size_t i = 0; i < times.size(); ++i) {
      const auto node = static_cast<std::size_t>(
          graph.node(static_cast<std::int32_t>(w), static_cast<std::int32_t>(i)));
      times[i] = {start[node], end[node]};
      timeline.makespan = std::max(timeline.makespan, end[node]);
    }
  }
  return timeline;
}

std::optional<Timeline> compute_timeline(const Schedule& schedule, const Costs& costs) {
  return compute_timeline(
      schedule, [&costs](WorkerId, const Action& action) { return costs.duration(action); });
}

}  // namespace recycle::planner
