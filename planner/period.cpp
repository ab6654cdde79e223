#include "planner/period.hpp"

#include <algorithm>
#include <deque>

#include "core/error.hpp"
#include "planner/lower.hpp"

namespace recycle::planner {

std::optional<SteadyState> steady_state(const ExecutionGraph& graph, std::int32_t max_iterations,
                                        SteadyStateTrace* trace) {
  RECYCLE_ASSERT(max_iterations >= 2, "a period needs two iterations");
  std::optional<std::vector<std::int32_t>> order;
  if (!graph.ordered()) {
    order = graph.topological_order();
    if (!order) return std::nullopt;
  }
  const auto n = static_cast<std::size_t>(graph.nodes());
  const std::vector<std::int32_t>& carried = graph.carried();
  const std::vector<std::int32_t> last = graph.last_nodes();
  std::vector<Nanos> previous(n), start(n), end(n);
  std::vector<std::int32_t> cause(trace != nullptr ? n : 0);
  const auto sweep = [&](bool first) {
    const std::span<const Nanos> before = first ? std::span<const Nanos>{} : previous;
    if (order) {
      graph.sweep(*order, before, start, end, cause);
    } else {
      graph.sweep(before, start, end, cause);
    }
  };
  // The carried nodes' ends of the last few iterations, newest first.
  constexpr std::size_t kCycles = 4;
  std::deque<std::vector<Nanos>> states;
  SteadyState out;
  Nanos first_end = 0, previous_end = 0, last_end = 0;
  const auto finish = [&](bool settled) {
    out.makespan = first_end;
    out.settled = settled;
    if (trace != nullptr) {
      trace->last_end = end;
      trace->last_start = start;
      trace->last_cause = cause;
      if (order) trace->order = *order;
    }
    return out;
  };
  for (std::int32_t it = 0; it < max_iterations; ++it) {
    sweep(it == 0);
    Nanos e = 0;
    for (const std::int32_t node : last) e = std::max(e, end[static_cast<std::size_t>(node)]);
    if (it == 0) {
      first_end = e;
      if (trace != nullptr) trace->first_end = end;
    }
    previous_end = last_end;
    last_end = e;
    std::vector<Nanos> state;
    state.reserve(carried.size());
    for (const std::int32_t node : carried) state.push_back(end[static_cast<std::size_t>(node)]);
    out.iterations = it + 1;
    // Nothing carried over (no iteration waits for the one before): each starts at 0.
    if (state.empty()) {
      out.period = first_end;
      return finish(true);
    }
    // The first iteration started from a state all at 0; if it hands on a state all at c (every
    // barrier schedule whose optimizer steps take one time), the next one is this one shifted by
    // c: every node has an edge, so none starts at 0 by default.
    if (it == 0 &&
        std::all_of(state.begin(), state.end(), [&](Nanos t) { return t == state.front(); })) {
      out.period = state.front();
      return finish(true);
    }
    for (std::size_t c = 1; c <= states.size(); ++c) {
      const std::vector<Nanos>& before = states[c - 1];
      const Nanos d = state.front() - before.front();
      bool uniform = true;
      for (std::size_t k = 1; k < state.size() && uniform; ++k) uniform = state[k] - before[k] == d;
      if (!uniform) continue;
      out.period = d / static_cast<Nanos>(c);
      out.cycle = static_cast<std::int32_t>(c);
      return finish(true);
    }
    states.push_front(std::move(state));
    if (states.size() > kCycles) states.pop_back();
    std::swap(previous, end);
  }
  std::swap(previous, end);  // the last iteration walked
  out.period = last_end - previous_end;
  return finish(false);
}

std::optional<SteadyState> steady_state(const Schedule& schedule, const CostModel& model,
                                        const RunOptions& options) {
  const Schedule lowered = schedule.is_lowered() ? schedule : lower(schedule, model);
  GraphOptions graph_options;
  graph_options.network = options.network;
  graph_options.staggered_optimizer = schedule.staggered_optimizer;
  graph_options.eager_sends = options.eager_sends;
  const ExecutionGraph graph(lowered, model, graph_options);
  return steady_state(graph);
}

std::optional<SteadyState> direct_steady_state(const Schedule& schedule, const CostModel& model) {
  GraphOptions graph_options;
  graph_options.staggered_optimizer = schedule.staggered_optimizer;
  const Schedule compute = schedule.is_lowered() ? strip_to_compute(schedule) : Schedule{};
  const ExecutionGraph graph(schedule.is_lowered() ? compute : schedule, model, graph_options);
  return steady_state(graph);
}

}  // namespace recycle::planner
