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
//  - then REDUCE_GRAD and OPT after the last action.
// On a free network the lowered schedule runs exactly as the compute-only one.
#pragma once

#include "planner/language/costs.hpp"
#include "planner/language/dependency_graph.hpp"
#include "planner/language/execution_graph.hpp"
#include "planner/language/schedule.hpp"

namespace recycle::planner {

/// `schedule` must be compute-only (no SEND/RECV/REDUCE_GRAD/OPT). `graph`, its execution graph on
/// the direct network (built with an ActionIndex of it, `index`), times the moments receives are
/// posted at: when each compute ends, and the data reaches its reader (a cost model's times:
/// planner/timing/cost_graph.hpp, lower(schedule, model)); if the compute schedule deadlocks,
/// each RECV goes right before the compute that needs it.
[[nodiscard]] Schedule lower(const Schedule& schedule, const ActionIndex& index,
                             const ExecutionGraph& graph);
/// With the costs on a free network.
[[nodiscard]] Schedule lower(const Schedule& schedule, const Costs& costs);
/// With F = I = W = 1 on every virtual stage: torch's own one-action-per-step placement.
[[nodiscard]] Schedule lower(const Schedule& schedule);

/// Drops SEND/RECV/REDUCE_GRAD/OPT, leaving the compute actions in order.
[[nodiscard]] Schedule strip_to_compute(const Schedule& schedule);

}  // namespace recycle::planner
