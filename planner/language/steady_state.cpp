#include "planner/language/steady_state.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace recycle::planner {

PeriodFinder::PeriodFinder(const ExecutionGraph& graph)
    : carried_(graph.carried()), last_(graph.last_nodes()) {
  out_.settled = false;
}

bool PeriodFinder::add(std::span<const Nanos> end) {
  if (out_.settled) return true;
  Nanos e = 0;
  for (const std::int32_t node : last_) e = std::max(e, end[static_cast<std::size_t>(node)]);
  const bool first = out_.iterations == 0;
  ++out_.iterations;
  if (first) out_.makespan = e;
  out_.period = e - last_end_;  // the last iteration's length, until a period is known
  last_end_ = e;
  const auto settle = [&](Nanos period, std::size_t cycle) {
    out_.period = period;
    out_.cycle = static_cast<std::int32_t>(cycle);
    out_.settled = true;
    states_.clear();
    return true;
  };
  std::vector<Nanos> state;
  state.reserve(carried_.size());
  for (const std::int32_t node : carried_) state.push_back(end[static_cast<std::size_t>(node)]);
  // Nothing carried over (no iteration waits for the one before): each starts at 0.
  if (state.empty()) return settle(out_.makespan, 1);
  // The first iteration started from a state all at 0; if it hands on a state all at c (every
  // barrier schedule whose optimizer steps take one time), the next one is this one shifted by
  // c: every node has an edge, so none starts at 0 by default.
  if (first &&
      std::all_of(state.begin(), state.end(), [&](Nanos t) { return t == state.front(); })) {
    return settle(state.front(), 1);
  }
  for (std::size_t c = 1; c <= states_.size(); ++c) {
    const std::vector<Nanos>& before = states_[c - 1];
    const Nanos d = state.front() - before.front();
    bool uniform = true;
    for (std::size_t k = 1; k < state.size() && uniform; ++k) uniform = state[k] - before[k] == d;
    if (uniform) return settle(d / static_cast<Nanos>(c), c);
  }
  states_.push_front(std::move(state));
  if (states_.size() > kCycles) states_.pop_back();
  return false;
}

std::optional<SteadyState> steady_state(const ExecutionGraph& graph, std::int32_t max_iterations,
                                        SteadyStateTrace* trace) {
  RECYCLE_ASSERT(max_iterations >= 2, "a period needs two iterations");
  // The walk's order: the numbering when it is topological, else one found now, from the order
  // the trace kept of the walk before (a search's last schedule, one move away).
  std::vector<std::int32_t> walk;
  const bool numbered = graph.ordered();
  if (!numbered &&
      !graph.topological_order(walk, trace != nullptr ? std::span<const std::int32_t>(trace->order)
                                                      : std::span<const std::int32_t>{})) {
    return std::nullopt;
  }
  const auto n = static_cast<std::size_t>(graph.nodes());
  std::vector<Nanos> previous(n), start(n), end(n);
  std::vector<std::int32_t> cause(trace != nullptr ? n : 0);
  PeriodFinder finder(graph);
  for (std::int32_t it = 0; it < max_iterations; ++it) {
    const std::span<const Nanos> before = it == 0 ? std::span<const Nanos>{} : previous;
    if (!numbered) {
      graph.sweep(walk, before, start, end, cause);
    } else {
      graph.sweep(before, start, end, cause);
    }
    if (it == 0 && trace != nullptr) trace->first_end = end;
    if (finder.add(end)) break;
    if (it + 1 < max_iterations) std::swap(previous, end);
  }
  if (trace != nullptr) {
    trace->last_end = std::move(end);
    trace->last_start = std::move(start);
    trace->last_cause = std::move(cause);
    trace->order = std::move(walk);
  }
  return finder.state();
}

}  // namespace recycle::planner
