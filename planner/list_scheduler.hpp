// Event-driven list scheduling: builds every live worker's action order by simulating one
// iteration with the planner's costs and, whenever a worker is free, starting the action that can
// start earliest there, preferring
//   I (it is on the critical path: upstream stages wait for its gradient),
//   then F (only while the worker holds fewer activations than the memory limit),
//   then W of the worker's own micro-batches, then W of re-routed micro-batches (deferred into
//   idle time, the decoupled-backprop trick of ReCycle and Zero Bubble).
// Taking the action with the globally earliest start keeps it causal. ZB-H2 is this scheduler on
// a fault-free layout with 2pp - 1 micro-batches of memory; ReCycle's adaptive schedules are this
// scheduler on the re-routed layout (planner/recycle_planner.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "planner/costs.hpp"
#include "planner/schedule.hpp"

namespace recycle::planner {

struct ListScheduleInput {
  const Schedule* skeleton = nullptr;  ///< layout, failed workers and routes; its worker lists are ignored
  const Costs* costs = nullptr;        ///< per virtual stage
  std::int32_t memory_limit = 1;       ///< micro-batches of activations per worker
  bool defer_rerouted_w = true;        ///< re-routed Ws after the worker's own Ws
};

/// The compute-action order (F, I, W) of every live worker, sorted by (dp, stage). Needs
/// interleave 1 and a route for every micro-batch whose owner's worker has failed.
[[nodiscard]] std::vector<WorkerSchedule> list_schedule(const ListScheduleInput& input);

}  // namespace recycle::planner
