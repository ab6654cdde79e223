// Event-driven list scheduling: builds every live worker's action order by simulating one
// iteration with the planner's costs and, whenever a worker is free, starting the action that can
// start earliest there, preferring
//   I (it is on the critical path: upstream stages wait for its gradient),
//   then F (only while the worker holds fewer activations than the memory limit; with several
//   chunks a worker, the F of a later chunk before one that lets a new micro-batch in),
//   then W of the worker's own micro-batches, then W of re-routed micro-batches (deferred into
//   idle time, the decoupled-backprop trick of ReCycle and Zero Bubble).
// Taking the action with the globally earliest start keeps it causal. ZB-H2 is this scheduler on
// a fault-free layout with 2pp - 1 micro-batches of memory; ReCycle's adaptive schedules are this
// scheduler on the re-routed layout (planner/recycle_planner.hpp). Pipelines no failure touches
// are scheduled once per class of alike ones (ListScheduleInput::stand_ins).
#pragma once

#include <cstdint>
#include <vector>

#include "planner/language/costs.hpp"
#include "planner/language/schedule.hpp"
#include "planner/timing/cost_model.hpp"

namespace recycle::planner {

struct ListScheduleInput {
  const Schedule* skeleton =
      nullptr;  ///< layout, failed workers and routes; its worker lists are ignored
  const Costs* costs = nullptr;  ///< per virtual stage
  /// Chunks of activations a worker may hold, per stage (size pp): micro-batches x interleave
  /// (chunk_limit). A micro-batch's first chunk on a worker runs only when all its chunks there
  /// fit beside those held and those kept for micro-batches already let in.
  std::vector<std::int32_t> memory_limit;
  bool defer_rerouted_w = true;  ///< re-routed Ws after the worker's own Ws
  bool fuse_backward = false;    ///< run B (= I then W) as one action, as plain 1F1B does
  /// Do not start a W when a gradient already on its way would arrive before the W ends: the I
  /// waits for nothing then, and upstream stages get their gradient earlier.
  bool wait_for_gradient = false;
  /// Ties between micro-batches ready at the same time go to the lower rank, indexed
  /// owner * microbatches + micro-batch; empty: by micro-batch, then owner.
  std::vector<std::int32_t> rank;
  /// Do not start an F when a gradient already on its way would arrive before the F ends: the
  /// idle moment lets the I start at once, so the stages upstream get their gradient earlier.
  bool forward_waits_for_gradient = false;
  /// Data made on another worker arrives after its transfer time on this model's network (the
  /// direct network of planner/language/execution_graph.hpp); nullptr or a free network: at once.
  const CostModel* network = nullptr;
  /// Stop as soon as the makespan is known to be at least this (a candidate that cannot beat
  /// one already made): the result then has `gave_up` set, the bound it reached and no lists.
  /// kMaxClock: never (a schedule whose times pass the clock's end is refused instead).
  Nanos give_up_at = kMaxClock;
  /// Schedule one pipeline for each class of interchangeable pipelines that no failure touches,
  /// and copy its lists to the others (the same lists as scheduling each, faster); false
  /// schedules every pipeline itself (the tests' reference).
  bool stand_ins = true;
  /// Only the makespan is wanted (a bound on a plan's period, planner/candidates.hpp
  /// period_ceiling): no lists are kept or returned.
  bool makespan_only = false;
};

struct ListScheduleResult {
  std::vector<WorkerSchedule>
      workers;           ///< every live worker's compute actions, sorted by (dp, stage)
  Nanos makespan = 0;    ///< of one iteration, with the input's costs and network
  bool gave_up = false;  ///< stopped at ListScheduleInput::give_up_at: makespan is a lower bound
};

/// Any interleave and placement; needs a route for every micro-batch whose owner's worker has
/// failed (a route moves all of a stage's chunks of the micro-batch to one peer). Each
/// action starts as early as its worker's order allows: on a free network the makespan equals
/// compute_timeline()'s for the returned lists.
[[nodiscard]] ListScheduleResult list_schedule(const ListScheduleInput& input);

/// The same memory limit on every stage.
[[nodiscard]] std::vector<std::int32_t> uniform_limit(const Layout& layout, std::int32_t limit);
/// 1F1B's own limit: stage s holds at most pp - s micro-batches.
[[nodiscard]] std::vector<std::int32_t> one_f_one_b_limit(const Layout& layout);
/// Per-stage limits in micro-batches counted in chunks (chunk_limit): what the list scheduler, the
/// order search and the lower bounds take.
[[nodiscard]] std::vector<std::int32_t> chunk_limits(const Layout& layout,
                                                     std::vector<std::int32_t> microbatches);

}  // namespace recycle::planner
