// A schedule's steady state on a cost model (planner/language/steady_state.hpp walks its graph):
// as `recycle simulate` runs it, and the planners' fast estimate.
#pragma once

#include <optional>

#include "planner/language/execution_graph.hpp"
#include "planner/language/schedule.hpp"
#include "planner/language/steady_state.hpp"
#include "planner/timing/cost_model.hpp"

namespace recycle::planner {

/// How a schedule runs: on the runtime network (the default), with eager sends, or on the direct
/// network (planner/language/execution_graph.hpp).
struct RunOptions {
  Network network = Network::kRuntime;
  bool eager_sends = false;  ///< runtime network: GraphOptions::eager_sends
};

/// The steady state of `schedule` exactly as `recycle simulate` runs it with `options`: lowered
/// with the model's costs when compute-only, with the schedule's optimizer mode. nullopt when it
/// deadlocks.
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
