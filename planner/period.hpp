// The steady-state iteration time of a schedule: the period `recycle simulate` reports once the
// iterations repeat, the planners' objective.
//
// Method: walk the execution graph (planner/execution_graph.hpp) one iteration after another.
// An iteration depends on the one before only through the nodes later iterations wait for (each
// worker's OPT, its last transfer); the walk is max-plus linear in them, so once they all move by
// the same amount d from one iteration to the next (or from c iterations back), every later
// iteration repeats the last one shifted by d, and d / c is the period, exactly. Pipeline
// schedules settle after one to three iterations (barrier: after one); the walk stops at
// `max_iterations` otherwise and says so.
#pragma once

#include <cstdint>

#include "core/units.hpp"
#include "planner/cost_model.hpp"
#include "planner/execution_graph.hpp"
#include "planner/schedule.hpp"

namespace recycle::planner {

struct SteadyState {
  Nanos makespan = 0;           ///< end of the first iteration, every worker starting at 0
  Nanos period = 0;             ///< steady-state iteration time
  std::int32_t iterations = 0;  ///< iterations walked
  std::int32_t cycle = 1;       ///< the times repeat every `cycle` iterations; period is the mean
  bool settled = true;          ///< false: no repetition within the limit; period = last difference
};

inline constexpr std::int32_t kMaxSteadyStateIterations = 64;

/// Needs a topological order (a schedule that does not deadlock).
[[nodiscard]] SteadyState steady_state(const ExecutionGraph& graph,
                                       std::int32_t max_iterations = kMaxSteadyStateIterations);

struct RunOptions {
  bool eager_sends = false;  ///< GraphOptions::eager_sends
};

/// The steady state of `schedule` exactly as `recycle simulate` runs it: lowered with the model's
/// costs when compute-only, on the runtime network, with the schedule's optimizer mode. nullopt
/// when it deadlocks.
[[nodiscard]] std::optional<SteadyState> steady_state(const Schedule& schedule,
                                                      const CostModel& model,
                                                      const RunOptions& options = {});

/// The planners' fast estimate, for comparing candidate orders: the compute actions alone on the
/// direct network, a remote input arriving after its transfer time (nothing on a free network),
/// the schedule's optimizer mode. On a free network it equals steady_state() of the lowered
/// schedule (the lowering posts every receive before it can delay anything); with a real network
/// it leaves out the waits of the communication streams. nullopt when it deadlocks.
[[nodiscard]] std::optional<SteadyState> direct_steady_state(const Schedule& schedule,
                                                             const CostModel& model);

}  // namespace recycle::planner
