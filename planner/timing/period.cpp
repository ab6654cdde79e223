#include "planner/timing/period.hpp"

#include "core/error.hpp"
#include "planner/language/lower.hpp"
#include "planner/timing/cost_graph.hpp"

namespace recycle::planner {

std::optional<SteadyState> steady_state(const Schedule& schedule, const CostModel& model,
                                        const RunOptions& options) {
  const Schedule lowered =
      schedule.is_lowered() ? schedule : lower(schedule, model, options.eager_sends);
  GraphOptions graph_options;
  graph_options.network = options.network;
  graph_options.staggered_optimizer = schedule.staggered_optimizer;
  graph_options.eager_sends = options.eager_sends;
  const ExecutionGraph graph = timed_graph(lowered, model, graph_options);
  return steady_state(graph);
}

std::optional<SteadyState> direct_steady_state(const Schedule& schedule, const CostModel& model) {
  GraphOptions graph_options;
  graph_options.staggered_optimizer = schedule.staggered_optimizer;
  const Schedule compute = schedule.is_lowered() ? strip_to_compute(schedule) : Schedule{};
  const ExecutionGraph graph =
      timed_graph(schedule.is_lowered() ? compute : schedule, model, graph_options);
  return steady_state(graph);
}

}  // namespace recycle::planner
