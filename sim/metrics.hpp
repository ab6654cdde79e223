// The numbers a simulation run is summed up by; docs/metrics.md defines each one. All are read
// from the Timeline of a SimRun, after the run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "planner/language/schedule.hpp"
#include "sim/simulator.hpp"

namespace recycle::sim {

struct WorkerMetrics {
  planner::WorkerId id;
  Nanos busy = 0;                         ///< compute time (F, I, W, B, OPT) in one iteration
  std::int32_t peak_inflight_chunks = 0;  ///< (virtual stage, micro-batch) pairs held at once
  double peak_inflight_microbatches = 0;  ///< chunks / interleave
  Bytes peak_activation_bytes = 0;
};

/// One link of the critical path.
struct CriticalStep {
  enum class Kind : std::uint8_t { kAction, kTransfer, kAllReduce };
  Kind kind = Kind::kAction;
  planner::WorkerId worker;  ///< the worker that ran it; a transfer's sender
  planner::WorkerId peer;    ///< a transfer's receiver; else = worker
  std::string token;         ///< the action's token; a transfer's SEND token; the REDUCE_GRAD token
  Nanos start = 0;
  Nanos end = 0;
};

struct Metrics {
  std::int32_t iterations = 0;
  std::vector<Nanos> iteration_ends;
  /// The steady-state period (planner::PeriodFinder, what `recycle plan` predicts): the mean
  /// over a cycle when iterations alternate; the last iteration's length if none repeats within
  /// planner::kMaxSteadyStateIterations.
  Nanos iteration_time = 0;
  planner::SteadyState steady;                  ///< how the period was found
  std::int64_t microbatches_per_iteration = 0;  ///< every pipeline's, re-routed ones included
  std::int64_t microbatch_size = 1;             ///< samples per micro-batch
  std::int64_t samples_per_iteration = 0;
  double throughput = 0;  ///< samples per second; 0 if iteration_time is 0
  double bubble_fraction = 0;
  std::vector<WorkerMetrics> workers;  ///< parallel to SimRun::schedule.workers
  Nanos critical_path_length = 0;
  std::vector<CriticalStep> critical_path;  ///< of the last iteration, first step first
};

[[nodiscard]] Metrics compute_metrics(const SimRun& run, std::int64_t microbatch_size = 1);

/// The critical path of `iteration`: from the action that ended last back through the causes
/// while they belong to that iteration.
[[nodiscard]] std::vector<CriticalStep> critical_path(const SimRun& run, std::int32_t iteration);

}  // namespace recycle::sim
