// ReCycle on a PipeDream-2BW base (planner/recycle_planner.hpp, RecycleOptions::base "2bw"): the
// adaptive plan for lists that run across iterations, with two weight versions.
//
// Under two weight versions a forward waits for the step two iterations back, so nothing stops
// the next iteration's forwards from running among this iteration's last backwards: a 2BW worker
// never drains. The plan starts from the synchronous ReCycle plan of the same routes (made on
// 1F1B, staggered) and runs each worker's list without its flush, as PipeDream-2BW runs 1F1B: the
// list's leading forwards run among the previous iteration's cool-down (the actions after its
// last forward and every action that reads one of them, to a fixed point), lagged (Action::lag),
// each forward as soon as it fits the memory (a second candidate: one forward after each backward
// unit), then the rest; each stage's REDUCE_GRAD and OPT follow its last lagged backward (lagged
// when any replica of the stage lags one, as replicas all-reduce together). On a fault-free 1F1B
// this is exactly the 2bw generator's order. The candidates (these lists; the synchronous lists
// as they are, which two weight versions run unchanged; without failures the 2bw generator's own)
// are validated, kept within the memory limits and compared by their steady-state period on the
// direct network.
#pragma once

#include <cstdint>
#include <vector>

#include "planner/recycle_planner.hpp"

namespace recycle::planner {

/// The best 2BW lists for the routes of `skeleton` (one chunk a worker, every stage with a live
/// worker) within per-stage memory limits `limit` (chunks), from `one_iteration`: the synchronous
/// plan's lists for the same routes and limits, itself a candidate, so a plan always exists.
[[nodiscard]] Schedule plan_two_bw(const Schedule& skeleton, const CostModel& model,
                                   const std::vector<std::int32_t>& limit,
                                   std::vector<WorkerSchedule> one_iteration);

}  // namespace recycle::planner
