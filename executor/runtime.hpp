// The executor's runtime: runs a schedule file on worker threads doing real arithmetic
// (executor/stage_math.hpp) with OpenBLAS, one thread per live worker, and times every action.
//
// Each worker walks its lowered action list (planner/lower.hpp: the one lowering the simulator
// runs) once per iteration:
//  - F, I, W, B compute on the stage's layers; a compute whose input is made on another worker
//    waits for the message its RECV posted (the receive is posted where the list puts it and
//    waited on by the compute that needs it, as the simulator models it);
//  - SEND_F / SEND_B deliver the output to the worker the schedule's routes name (re-routed
//    micro-batches included);
//  - REDUCE_GRAD sums the stage's gradients over its live replicas (in replica order, so the
//    result does not depend on thread timing); OPT steps SGD on the mean over the global batch.
//    Without a staggered optimizer every OPT first waits for every worker (the global barrier).
// Waits give up after RunConfig::wait_limit and the run stops with an error: never a hang.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "executor/stage_math.hpp"
#include "planner/schedule.hpp"

namespace recycle::executor {

struct RunConfig {
  StageShape shape;
  std::int32_t iterations = 4;
  std::uint64_t seed = 1;
  double learning_rate = 0.05;
  std::chrono::milliseconds wait_limit{60'000};
};

struct TimedAction {
  planner::Action action;
  std::int32_t iteration = 0;
  std::int64_t start_ns = 0;  ///< from the common start of every worker
  std::int64_t end_ns = 0;
};

struct WorkerRun {
  planner::WorkerId id;
  std::vector<TimedAction> timeline;
  /// Per virtual stage the worker runs (ascending): its parameters after the last iteration.
  std::vector<std::pair<std::int32_t, std::vector<float>>> parameters;
};

struct RunResult {
  std::vector<WorkerRun> workers;  ///< parallel to the schedule's workers
  /// Micro-batches whose loss was computed, over every iteration; each (owner, micro-batch) of
  /// each iteration exactly once (the run fails otherwise).
  std::int64_t microbatches_processed = 0;
  std::vector<double> loss;  ///< per iteration: mean loss over the global batch
  /// Per iteration: when its last OPT ended.
  std::vector<std::int64_t> iteration_end_ns;

  /// The measured steady-state iteration time: the mean spacing of iteration ends after the
  /// first (which includes the warm-up); the first iteration's end when there is only one.
  [[nodiscard]] double iteration_time_s() const;
};

/// Runs `schedule` (compute-only schedules are lowered first) for config.iterations iterations.
/// Throws InputError when the schedule is invalid or deadlocks (checked before anything runs),
/// std::runtime_error when a worker fails while running.
[[nodiscard]] RunResult run_on_cpu(const planner::Schedule& schedule, const RunConfig& config);

}  // namespace recycle::executor
