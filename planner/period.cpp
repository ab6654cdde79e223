#include "planner/period.hpp"

#include <algorithm>
#include <deque>

#include "core/error.hpp"
#include "planner/lower.hpp"

namespace recycle::planner {

SteadyState steady_state(const ExecutionGraph& graph, std::int32_t max_iterations) {
  RECYCLE_ASSERT(graph.ordered(), "the period of a schedule that deadlocks");
  RECYCLE_ASSERT(max_iterations >= 2, "a period needs two iterations");
  const auto n = static_cast<std::size_t>(graph.nodes());
  const std::vector<std::int32_t>& carried = graph.carried();
  const std::vector<std::int32_t> last = graph.last_nodes();
  std::vector<Nanos> previous(n), start(n), end(n);
  // The carried nodes' ends of the last few iterations, newest first.
  constexpr std::size_t kCycles = 4;
  std::deque<std::vector<Nanos>> states;
  std::vector<Nanos> iteration_end;
  SteadyState out;
  for (std::int32_t it = 0; it < max_iterations; ++it) {
    graph.sweep(it == 0 ? std::span<const Nanos>{} : std::span<const Nanos>(previous), start, end);
    Nanos e = 0;
    for (const std::int32_t node : last) e = std::max(e, end[static_cast<std::size_t>(node)]);
    iteration_end.push_back(e);
    std::vector<Nanos> state;
    state.reserve(carried.size());
    for (const std::int32_t node : carried) state.push_back(end[static_cast<std::size_t>(node)]);
    out.iterations = it + 1;
    for (std::size_t c = 1; c <= states.size(); ++c) {
      const std::vector<Nanos>& before = states[c - 1];
      const Nanos d = state.empty() ? 0 : state.front() - before.front();
      bool uniform = true;
      for (std::size_t k = 0; k < state.size() && uniform; ++k) uniform = state[k] - before[k] == d;
      if (!uniform) continue;
      out.makespan = iteration_end.front();
      out.period = d / static_cast<Nanos>(c);
      out.cycle = static_cast<std::int32_t>(c);
      out.settled = true;
      // Without carried nodes (a schedule that never waits for a previous iteration) every
      // iteration starts at 0: the period is the makespan.
      if (state.empty()) out.period = out.makespan;
      return out;
    }
    states.push_front(std::move(state));
    if (states.size() > kCycles) states.pop_back();
    std::swap(previous, end);
  }
  out.makespan = iteration_end.front();
  out.period = iteration_end.size() >= 2
                   ? iteration_end.back() - iteration_end[iteration_end.size() - 2]
                   : iteration_end.back();
  out.settled = false;
  return out;
}

std::optional<SteadyState> steady_state(const Schedule& schedule, const CostModel& model,
                                        const RunOptions& options) {
  const Schedule lowered = schedule.is_lowered() ? schedule : lower(schedule, model.compute);
  GraphOptions graph_options;
  graph_options.network = Network::kRuntime;
  graph_options.staggered_optimizer = schedule.staggered_optimizer;
  graph_options.eager_sends = options.eager_sends;
  const ExecutionGraph graph(lowered, model, graph_options);
  if (!graph.ordered()) return std::nullopt;
  return steady_state(graph);
}

std::optional<SteadyState> direct_steady_state(const Schedule& schedule, const CostModel& model) {
  GraphOptions graph_options;
  graph_options.staggered_optimizer = schedule.staggered_optimizer;
  const Schedule compute = schedule.is_lowered() ? strip_to_compute(schedule) : Schedule{};
  const ExecutionGraph graph(schedule.is_lowered() ? compute : schedule, model, graph_options);
  if (!graph.ordered()) return std::nullopt;
  return steady_state(graph);
}

}  // namespace recycle::planner
