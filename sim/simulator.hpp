// The simulator: runs a pipeline schedule on a model of a GPU cluster, event by event, and says
// how long an iteration takes and where the time goes.
//
// Concepts:
//  - EventQueue (sim/event_queue.hpp): pending events by (time, sequence number); integer
//    nanoseconds; the same inputs give the same outputs, byte for byte.
//  - CostModel and Cluster (sim/cost_model.hpp, sim/cluster.hpp): what each action costs and
//    where the workers sit: per-worker compute stream, FIFO send and receive queues, ring
//    all-reduce over a stage's live DP peers.
//  - simulate() (this file): executes the lowered schedule for K consecutive iterations with the
//    semantics of docs/architecture.md and records a Timeline (sim/timeline.hpp).
//  - Metrics (sim/metrics.hpp): steady-state iteration time, throughput, bubble fraction, busy
//    time, peak in-flight micro-batches and activation bytes, the critical path
//    (docs/metrics.md defines each).
//  - Reports (sim/report.hpp, sim/chrome_trace.hpp, sim/svg_gantt.hpp): table, JSON, Chrome
//    trace (Perfetto), SVG Gantt chart.
//
// Execution, per worker: one compute stream runs the worker's action list in order. F/I/W/B take
// their compute time. SEND posts a transfer and takes no stream time: the transfer starts when
// the sender's send queue and the receiver's receive queue are both free (FIFO, in posting order)
// and holds both for latency + bytes / bandwidth. RECV holds the stream until its transfer has
// arrived. REDUCE_GRAD holds the stream until the stage's all-reduce ends; the all-reduce starts
// when the last live DP peer of the stage reaches it. OPT takes the stage's optimizer time; with
// the default barrier it starts only when every worker has reached its OPT (a global barrier, as
// for gradient clipping); with a staggered optimizer it starts as soon as its own stream gets
// there. The next iteration starts on each worker right after its own OPT.
#pragma once

#include <cstdint>
#include <string>

#include "planner/schedule.hpp"
#include "sim/cost_model.hpp"
#include "sim/timeline.hpp"

namespace recycle::sim {

struct SimOptions {
  std::int32_t iterations = 4;       ///< consecutive iterations to run (>= 1)
  bool staggered_optimizer = false;  ///< false: every OPT waits for a global barrier
  std::string source = "schedule";   ///< names the schedule in error messages (a file, a flag)
};

/// A finished simulation: the schedule that ran (lowered), its costs, and its timeline.
struct SimRun {
  planner::Schedule schedule;
  CostModel model;
  SimOptions options;
  Timeline timeline;
};

/// True when the schedule holds any SEND/RECV/REDUCE_GRAD/OPT action, i.e. is ready to execute.
[[nodiscard]] bool is_lowered(const planner::Schedule& schedule) noexcept;

/// Runs `schedule` (lowered first if it holds compute actions only). Throws InputError naming
/// options.source if a SEND has no matching RECV (or the reverse), a worker is outside the layout
/// or has no actions, or the schedule deadlocks.
[[nodiscard]] SimRun simulate(planner::Schedule schedule, CostModel model, SimOptions options);

}  // namespace recycle::sim
