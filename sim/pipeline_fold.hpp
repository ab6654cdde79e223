// Folding identical pipelines: pipelines that run the same lists at the same costs run at the
// same times, so the simulator runs one of each and copies its records to the others.
//
// A pipeline folds onto an earlier one when
//  - both have every stage's worker, run only their own micro-batches and appear in no route;
//  - their workers' lists are the same action for action (the owner aside);
//  - the cluster makes pipelines interchangeable (planner/cluster.hpp: a free network, or every
//    pipeline on whole nodes of its own), so every transfer of one costs what the same transfer
//    of the other costs, and two DP peers of a stage never share a node;
//  - the schedule lists its workers sorted by (dp, stage), as schedules do.
// Such pipelines touch the rest of the schedule only through each stage's all-reduce and the
// optimizer barrier, which start when the last of their members arrives: a folded pipeline arrives
// with the one it folds onto, so those start at the same times; the all-reduce still spans every
// peer (Cluster::set_absent_ring_peers counts the folded ones). Ties go to the first member in list
// order, which is the one kept. The run is therefore the one the whole schedule gives, record for
// record (tests/sim/pipeline_fold_test.cpp compares them), at the cost of one pipeline per class
// plus copying the records: a fault-free iteration of DP 128 pipelines simulates one of them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "planner/cost_model.hpp"
#include "planner/schedule.hpp"
#include "sim/timeline.hpp"

namespace recycle::sim {

struct PipelineFold {
  /// The workers simulated: those of every pipeline that does not fold, in the input's order.
  planner::Schedule schedule;
  /// Per worker of the whole schedule: the worker of `schedule` whose run it repeats (itself, for
  /// a worker that is simulated).
  std::vector<std::int32_t> source;
  std::int32_t folded_pipelines = 0;  ///< pipelines left out of `schedule`
};

/// The fold of `schedule` on `model`; nullopt when no pipeline folds.
[[nodiscard]] std::optional<PipelineFold> fold_pipelines(const planner::Schedule& schedule,
                                                         const planner::CostModel& model);

/// The whole schedule's lists from the simulated ones (`ran`: fold.schedule as it ran, lowered and
/// with its implied actions): each folded worker gets its source's list, owners renamed.
[[nodiscard]] planner::Schedule unfold_schedule(const planner::Schedule& whole,
                                                const PipelineFold& fold,
                                                const planner::Schedule& ran);

/// The whole schedule's timeline (`whole`: the result of unfold_schedule) from the simulated one.
/// `through_barrier[r]` says that action record r's cause is the optimizer barrier's (the last
/// worker to reach it, wherever it is), which stays where it is instead of moving to the folded
/// pipeline's own worker.
[[nodiscard]] Timeline unfold_timeline(const Timeline& ran,
                                       const std::vector<char>& through_barrier,
                                       const planner::Schedule& whole, const PipelineFold& fold);

}  // namespace recycle::sim
