#include "planner/timing.hpp"

#include <algorithm>

#include "planner/dependency_graph.hpp"

namespace recycle::planner {

std::optional<Timeline> compute_timeline(const Schedule& schedule, const DurationFn& duration) {
  const ActionIndex index(schedule);
  const DependencyGraph graph(schedule, index);
  const auto order = graph.topological_order();
  if (!order) return std::nullopt;

  // Per-node durations and times in flat arrays, filled worker by worker (node order), so the
  // topological sweep touches nothing else.
  const auto n = static_cast<std::size_t>(graph.nodes());
  std::vector<Nanos> length(n, 0);  // collective nodes take no time: they only join the peers
  for (std::size_t w = 0; w < schedule.workers.size(); ++w) {
    const WorkerSchedule& worker = schedule.workers[w];
    auto node = static_cast<std::size_t>(index.node(static_cast<std::int32_t>(w), 0));
    for (const Action& a : worker.actions) length[node++] = duration(worker.id, a);
  }
  // start[v]: the latest end among v's predecessors seen so far; final once v comes up in order.
  std::vector<Nanos> start(n, 0);
  for (const std::int32_t node : *order) {
    const auto v = static_cast<std::size_t>(node);
    const Nanos end = start[v] + length[v];
    for (const auto next : boost::make_iterator_range(
             boost::adjacent_vertices(static_cast<std::uint32_t>(node), graph.graph()))) {
      start[next] = std::max(start[next], end);
    }
  }

  Timeline timeline;
  timeline.workers.reserve(schedule.workers.size());
  for (std::size_t w = 0; w < schedule.workers.size(); ++w) {
    auto node = static_cast<std::size_t>(index.node(static_cast<std::int32_t>(w), 0));
    std::vector<ActionTime>& times =
        timeline.workers.emplace_back(schedule.workers[w].actions.size());
    for (ActionTime& t : times) {
      t = {start[node], start[node] + length[node]};
      timeline.makespan = std::max(timeline.makespan, t.end);
      ++node;
    }
  }
  return timeline;
}

std::optional<Timeline> compute_timeline(const Schedule& schedule, const Costs& costs) {
  return compute_timeline(
      schedule, [&costs](WorkerId, const Action& action) { return costs.duration(action); });
}

}  // namespace recycle::planner
