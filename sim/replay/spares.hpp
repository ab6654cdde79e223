// The capacity question of the ReCycle paper: with no spare nodes, what does ReCycle train
// against checkpoint-restart, and how many spare nodes does checkpoint-restart need to match
// ReCycle's goodput (`recycle replay --match-spares`, docs/policies.md). Checkpoint-restart is
// replayed with 1, 2, ... spare nodes more than the job file gives, each on the trace as it maps
// onto the larger cluster (spares fail too), until its goodput reaches ReCycle's; what each
// costs is its GPU-hours (spares included) per sample trained.
#pragma once

#include <cstdint>
#include <functional>

#include "planner/job_model.hpp"
#include "sim/replay/replay.hpp"
#include "traces/trace.hpp"

namespace recycle::sim {

struct SparesMatch {
  double target = 0;             ///< ReCycle's goodput with the job's own spares
  double recycle_gpu_hours = 0;  ///< ReCycle's GPU-hours per sample trained
  std::int64_t job_spares = 0;   ///< the spares the job file gives
  /// Spares added to checkpoint-restart's cluster: the fewest that reach `target`, or, when none
  /// does, the fewest that give its best goodput.
  std::int64_t extra = 0;
  bool matched = false;  ///< whether checkpoint-restart reached `target` with `extra`
  /// The fewest extra spares with which checkpoint-restart no longer waits for a repair (0: not
  /// reached within the spares tried).
  std::int64_t saturated = 0;
  std::int64_t tried = 0;           ///< the most extra spares replayed
  PolicyResult checkpoint;          ///< checkpoint-restart with `extra` more spares
  double checkpoint_gpu_hours = 0;  ///< its GPU-hours per sample (infinite: none trained)
};

/// `recycle` is ReCycle's result on the job's own cluster; `trace_for(nodes)` gives the trace
/// replayed on a cluster of `nodes` nodes. Tries 1, 2, ... up to `most` extra spares, and stops
/// at the first that matches or that leaves checkpoint-restart no time waiting for a repair
/// (more spares cannot help it then).
[[nodiscard]] SparesMatch match_spares(const planner::JobModel& model,
                                       const std::function<traces::Trace(std::int64_t)>& trace_for,
                                       const ReplayOptions& options, const PolicyResult& recycle,
                                       std::int64_t most);

}  // namespace recycle::sim
