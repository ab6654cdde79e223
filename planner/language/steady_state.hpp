// The steady-state iteration time of a schedule's execution graph: the period `recycle simulate`
// reports once the iterations repeat, the planners' objective (planner/timing/period.hpp times a
// schedule on a cost model with it).
//
// Method: walk the execution graph (planner/language/execution_graph.hpp) one iteration after
// another. An iteration depends on the one before only through the nodes later iterations wait for
// (each worker's OPT, its last transfer); the walk is max-plus linear in them, so once they all
// move by the same amount d from one iteration to the next (or from c iterations back), every later
// iteration repeats the last one shifted by d, and d / c is the period, exactly. Pipeline
// schedules settle after one to three iterations (a barrier schedule whose optimizer steps take
// one time: after the first, which hands on a state all at one time); the walk stops at
// `max_iterations` otherwise and says so.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

#include "core/units.hpp"
#include "planner/language/execution_graph.hpp"

namespace recycle::planner {

struct SteadyState {
  Nanos makespan = 0;           ///< end of the first iteration, every worker starting at 0
  Nanos period = 0;             ///< steady-state iteration time
  std::int32_t iterations = 0;  ///< iterations walked
  std::int32_t cycle = 1;       ///< the times repeat every `cycle` iterations; period is the mean
  /// false: no repetition within the limit; period = the last difference (after one iteration:
  /// the makespan, which bounds the period from above)
  bool settled = true;
};

inline constexpr std::int32_t kMaxSteadyStateIterations = 64;

/// The one test of a steady state, fed one iteration at a time: each iteration's node ends in
/// turn (as ExecutionGraph::sweep leaves them), it says once the carried nodes repeat, shifted by
/// the same amount from one iteration (or from `cycle` iterations) back. steady_state() and the
/// simulator (sim/simulator.cpp) both walk the graph through it, so `recycle plan` and `recycle
/// simulate` print one period.
class PeriodFinder {
 public:
  explicit PeriodFinder(const ExecutionGraph& graph);

  /// Takes the next iteration's node ends (indexed by node); true once the period is known, and
  /// from then on (later iterations change nothing).
  bool add(std::span<const Nanos> end);
  [[nodiscard]] bool settled() const noexcept { return out_.settled; }
  /// The steady state: once settled, the period (the mean over a cycle); before, the last
  /// iteration's length (after one iteration: the makespan, which bounds the period from above)
  /// with `settled` false.
  [[nodiscard]] SteadyState state() const noexcept { return out_; }

 private:
  static constexpr std::size_t kCycles = 4;  ///< longest cycle looked for
  const std::vector<std::int32_t>& carried_;
  std::vector<std::int32_t> last_;
  std::deque<std::vector<Nanos>> states_;  ///< carried nodes' ends, newest first
  Nanos last_end_ = 0;
  SteadyState out_;
};

/// What a walk leaves behind for searches: node times of the first and of the last iteration.
struct SteadyStateTrace {
  std::vector<Nanos> first_end;          ///< per node, in the first iteration
  std::vector<Nanos> last_end;           ///< per node, in the last iteration walked
  std::vector<Nanos> last_start;         ///< per node, in the last iteration walked
  std::vector<std::int32_t> last_cause;  ///< per node: the edge that set its start, or -1
  /// The order the walk took when the numbering is not a topological order (else empty).
  std::vector<std::int32_t> order;
};

/// nullopt when the same-iteration edges form a cycle (the schedule deadlocks). Walks the graph in
/// its numbering when that is a topological order, else in one computed on the spot (after
/// ExecutionGraph::reorder()). `trace`, when given, receives the node times.
[[nodiscard]] std::optional<SteadyState> steady_state(
    const ExecutionGraph& graph, std::int32_t max_iterations = kMaxSteadyStateIterations,
    SteadyStateTrace* trace = nullptr);

}  // namespace recycle::planner
