// The iteration simulator: runs a pipeline schedule on a model of a GPU cluster for several
// consecutive iterations and records when every action, transfer and all-reduce started and
// ended, and why.
//
// Concepts:
//  - CostModel (planner/timing/cost_model.hpp, planner/timing/cluster.hpp): what each action costs
//  and where
//    the workers sit; a free network (`--costs`) or a profile's hardware.
//  - ExecutionGraph (planner/language/execution_graph.hpp): the schedule's rules as a timed graph.
//  Every
//    order in the runtime it models is fixed by the lists (each stream runs its list in order,
//    each transfer pairs one SEND with one RECV), so an iteration's times are the longest paths
//    of that graph: the simulator walks it iteration after iteration, exactly as the planner's
//    steady-state period (planner/timing/period.hpp) does, and records the result.
//  - Timeline (sim/timeline.hpp): the records, with each one's cause, for the critical path.
//  - Metrics, reports (sim/metrics.hpp, sim/report.hpp, sim/chrome_trace.hpp, sim/svg_gantt.hpp):
//    iteration time, throughput, bubbles, memory; table, JSON, Chrome trace, SVG.
//
// The network is the runtime's by default (the runtime network of
// planner/language/execution_graph.hpp): one communication stream per worker running its SENDs and
// RECVs in list order, rendezvous transfers (or eager sends), latency + bytes / bandwidth on the
// link the placement gives; on a free network (CostModel::compute_only, `--costs`) every transfer
// takes no time, but the order still holds, so a schedule that would hang the runtime deadlocks
// here too. The direct network (Zero Bubble's model of communication) charges only each transfer's
// time between producer and consumer. REDUCE_GRAD joins the stage's ring all-reduce; OPT waits for
// a global barrier unless the optimizer is staggered; the next iteration starts on each worker
// after its own OPT.
#pragma once

#include <cstdint>
#include <string>

#include "planner/language/execution_graph.hpp"
#include "planner/language/schedule.hpp"
#include "planner/timing/cost_model.hpp"
#include "sim/timeline.hpp"

namespace recycle::sim {

using planner::CostModel;

struct SimOptions {
  std::int32_t iterations = 4;       ///< consecutive iterations to run (>= 1)
  bool staggered_optimizer = false;  ///< false: every OPT waits for a global barrier
  /// The runtime network (default) or the direct one (planner/language/execution_graph.hpp).
  planner::Network network = planner::Network::kRuntime;
  /// Runtime network: a transfer starts when its SEND is posted, without waiting for the RECV
  /// (NCCL's buffered sends of messages that fit its connection buffer); default: rendezvous.
  bool eager_sends = false;
  std::string source =
      planner::kUnnamedSchedule;  ///< names the schedule in errors (a file, a flag)
  /// Run one pipeline of each set of identical ones and copy its records to the others
  /// (sim/pipeline_fold.hpp): the same run, record for record; false runs every pipeline.
  bool fold_pipelines = true;
};

/// A finished simulation: the schedule that ran (lowered), its costs, and its timeline.
struct SimRun {
  planner::Schedule schedule;
  CostModel model;
  SimOptions options;
  Timeline timeline;
};

/// Runs `schedule`: lowered first (planner/language/lower.hpp, with the model's compute costs) if
/// it holds compute actions only; a lowered schedule that lists no REDUCE_GRAD/OPT gets them after
/// its last action. Throws InputError naming options.source if a SEND has no matching RECV (or the
/// reverse), a worker is outside the layout, listed twice or has no actions, or the schedule
/// deadlocks.
[[nodiscard]] SimRun simulate(planner::Schedule schedule, CostModel model, SimOptions options);

/// The optimizer mode the run had, as reports name it: "2bw" for a schedule of two weight
/// versions (no barrier, whatever the options), else "staggered" or "barrier".
[[nodiscard]] const char* optimizer_name(const SimRun& run) noexcept;

}  // namespace recycle::sim
