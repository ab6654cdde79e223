// The executor's runtime: runs a schedule file on worker threads doing real arithmetic
// (executor/stage_math.hpp) with OpenBLAS, one thread per live worker, and times every action.
//
// Each worker walks its lowered action list (planner/language/lower.hpp: the one lowering the
// simulator runs) once per iteration:
//  - F, I, W, B compute on the stage's layers; a compute whose input is made on another worker
//    waits for the message its RECV posted (the receive is posted where the list puts it and
//    waited on by the compute that needs it, as the simulator models it);
//  - SEND_F / SEND_B deliver the output to the worker the schedule's routes name (re-routed
//    micro-batches included);
//  - REDUCE_GRAD sums the stage's gradients over its live replicas (in replica order, so the
//    result does not depend on thread timing); OPT steps SGD on the mean over the global batch.
//    Without a staggered optimizer every OPT first waits for every worker (the global barrier).
// Waits give up after RunConfig::wait_limit and the run stops with an error: never a hang.
//
// Failure injection (RunConfig::kills): the killed worker stops part-way through an iteration
// (its thread and its heartbeat end); the others go on until they block on it, a heartbeat
// monitor (executor/heartbeat.hpp) reports the worker after its missed beats, every survivor
// stops, the iterations not finished by every worker are dropped (each survivor restores the
// parameters it had when the first of them began, and their micro-batches are uncounted), and the
// survivors resume at that iteration on the kill's plan: the schedule for the new failure set,
// made in advance as ReCycle's planner makes its plans ahead of failures.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "executor/heartbeat.hpp"
#include "executor/stage_math.hpp"
#include "planner/language/schedule.hpp"

namespace recycle::executor {

/// Stops `worker` in iteration `iteration` (from 0) after `fraction` of its actions.
struct Kill {
  planner::WorkerId worker;
  std::int32_t iteration = 0;
  double fraction = 0;  ///< [0, 1)
  /// What the survivors run from the dropped iteration on: a schedule of the same layout whose
  /// workers are survivors, each running only virtual stages it already holds.
  planner::Schedule then;
};

struct RunConfig {
  StageShape shape;
  std::int32_t iterations = 4;
  std::uint64_t seed = 1;
  double learning_rate = 0.05;
  std::chrono::milliseconds wait_limit{60'000};
  std::vector<Kill> kills;  ///< in the order they strike
  HeartbeatConfig heartbeat;
  /// Empty: the workers' threads run where the system puts them. Else worker i of the schedule's
  /// list (the first schedule's, kept across kills) runs only on cpu pin_cpus[i % size]: how
  /// workers share cores when they outnumber them (sim/shared_cores.hpp models the same).
  std::vector<int> pin_cpus;
};

struct TimedAction {
  planner::Action action;
  std::int32_t iteration = 0;
  std::int64_t start_ns = 0;  ///< from the common start of every worker
  std::int64_t end_ns = 0;
  /// The processor time the worker's thread used for it (thread_cpu_ns), recorded when workers
  /// are kept on cores they share (RunConfig::pin_cpus), where the wall time includes the others'
  /// work; -1 otherwise.
  std::int64_t cpu_ns = -1;
  bool dropped = false;  ///< part of an iteration a failure interrupted (redone later)

  /// The work it took: its processor time where recorded, else its wall time.
  [[nodiscard]] std::int64_t work_ns() const noexcept {
    return cpu_ns >= 0 ? cpu_ns : end_ns - start_ns;
  }
};

/// What one kill did.
struct Recovery {
  planner::WorkerId killed;
  std::int64_t kill_ns = 0;       ///< when the worker stopped
  std::int64_t last_beat_ns = 0;  ///< its last heartbeat
  std::int64_t detect_ns = 0;     ///< when the monitor found its heartbeat missing
  std::int64_t resume_ns = 0;     ///< when the survivors started again on the new plan
  std::int32_t resumed_at = 0;    ///< the first dropped iteration, where the survivors resumed
  std::int32_t dropped_iterations = 0;
  std::int64_t dropped_microbatches = 0;  ///< losses computed in dropped iterations (redone)
};

struct WorkerRun {
  planner::WorkerId id;
  std::vector<TimedAction> timeline;
  /// Per virtual stage the worker runs (ascending): its parameters after the last iteration;
  /// empty for a killed worker.
  std::vector<std::pair<std::int32_t, std::vector<float>>> parameters;
  bool killed = false;
};

struct RunResult {
  std::vector<WorkerRun> workers;  ///< parallel to the (first) schedule's workers
  /// Micro-batches whose loss was computed, over every iteration; each (owner, micro-batch) of
  /// each iteration exactly once (the run fails otherwise).
  std::int64_t microbatches_processed = 0;
  std::vector<double> loss;  ///< per iteration: mean loss over the global batch
  /// Per iteration: when its last OPT ended.
  std::vector<std::int64_t> iteration_end_ns;
  std::vector<Recovery> recoveries;  ///< one per kill
  /// The iteration each schedule ran from: {0} without kills, then each recovery's resumed_at.
  std::vector<std::int32_t> segment_start;

  /// The measured steady-state iteration time: the mean spacing of iteration ends after the
  /// first (which includes the warm-up); the first iteration's end when there is only one.
  [[nodiscard]] double iteration_time_s() const;
  /// The same over the iterations schedule `segment` ran (segment_start); 0 when it finished
  /// fewer than two.
  [[nodiscard]] double iteration_time_s(std::size_t segment) const;
  /// Each iteration's time of schedule `segment` after its first: the spacings of their ends,
  /// whose mean is iteration_time_s(segment); empty when it finished fewer than two.
  [[nodiscard]] std::vector<double> iteration_times_s(std::size_t segment) const;
};

class Peers;

/// Runs `schedule` (compute-only schedules are lowered first) for config.iterations iterations.
/// Throws InputError when a schedule is invalid or deadlocks or a kill does not fit it (checked
/// before anything runs), std::runtime_error when a worker fails while running other than by a
/// kill. With `peers` (executor/peers.hpp), this process runs its share of the workers, and only
/// the first process's result is whole.
[[nodiscard]] RunResult run_on_cpu(const planner::Schedule& schedule, const RunConfig& config,
                                   Peers* peers = nullptr);

}  // namespace recycle::executor
