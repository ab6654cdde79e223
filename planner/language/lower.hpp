// The lowering pass: from a compute-only schedule to one a runtime can execute, posting
// communication where torch.distributed.pipelining's lowering posts it (`_add_send_recv`, used by
// its `_PipelineScheduleRuntime`):
//  - a SEND right after each compute whose output another worker reads
//  (planner/language/semantics.hpp);
//  - its RECV on the reader's list at the moment the data is made: after the reader's last
//    compute that has ended by then, so the receive is posted early and the reader waits for the
//    data only at the compute that needs it. torch finds that moment by stepping every rank one
//    action at a time; here it comes from the compute-only timeline with the given costs, so with
//    unit costs the two agree.
//  - on every worker the SENDs and RECVs in the order of the moments their data is made (ties by
//    the sender and its position): one order shared by both sides of every pair, so a valid
//    compute schedule cannot deadlock on the communication streams;
//  - then REDUCE_GRAD and OPT after the last action;
//  - in lists that run across iterations (2bw), the pair of a lagged reader whose data comes after
//    the reader's list has no compute left either at the end of that list or in the reader's
//    own (LaggedPairs), whichever runs faster.
// On a free network the lowered schedule runs exactly as the compute-only one.
#pragma once

#include <functional>
#include <optional>

#include "core/units.hpp"
#include "planner/language/costs.hpp"
#include "planner/language/dependency_graph.hpp"
#include "planner/language/execution_graph.hpp"
#include "planner/language/schedule.hpp"

namespace recycle::planner {

/// Where the pair of a transfer goes when its data is made after every compute of the list of a
/// reader that runs an iteration behind (a lagged list, 2bw: `0B5'` reading the previous
/// iteration's gradient that `1B5` makes late in stage 1's list).
enum class LaggedPairs {
  /// Its RECV at the end of the reader's list before the reader's: the data's own iteration.
  kPreviousList,
  /// Both in the reader's list, marked `'` (the SEND of the data the list before made, the RECV
  /// right before the reader), ordered by when the reader starts: the reader's list does not
  /// hold its first transfers back behind a receive of data made late in the list before.
  kReadersList,
};

/// `schedule` must be compute-only (no SEND/RECV/REDUCE_GRAD/OPT). `graph`, its execution graph on
/// the direct network (built with an ActionIndex of it, `index`), times the moments receives are
/// posted at: when each compute ends, and the data reaches its reader (a cost model's times:
/// planner/timing/cost_graph.hpp, lower(schedule, model)); if the compute schedule deadlocks,
/// each RECV goes right before the compute that needs it.
[[nodiscard]] Schedule lower(const Schedule& schedule, const ActionIndex& index,
                             const ExecutionGraph& graph,
                             LaggedPairs pairs = LaggedPairs::kPreviousList);
/// The steady-state period of a lowered schedule as it runs (nullopt: it deadlocks).
using LoweredPeriod = std::function<std::optional<Nanos>(const Schedule&)>;
/// Lists that run across iterations (has_lags) lowered both ways of LaggedPairs, keeping the
/// kReadersList one where `period` times it faster; otherwise as above.
[[nodiscard]] Schedule lower(const Schedule& schedule, const ActionIndex& index,
                             const ExecutionGraph& graph, const LoweredPeriod& period);
/// With the costs on a free network.
[[nodiscard]] Schedule lower(const Schedule& schedule, const Costs& costs);
/// With F = I = W = 1 on every virtual stage: torch's own one-action-per-step placement.
[[nodiscard]] Schedule lower(const Schedule& schedule);

/// Drops SEND/RECV/REDUCE_GRAD/OPT, leaving the compute actions in order.
[[nodiscard]] Schedule strip_to_compute(const Schedule& schedule);

}  // namespace recycle::planner
