// Local search over the workers' action orders, to shorten the steady-state iteration of a list
// schedule: a tabu search on the critical path (the classic job-shop method: Nowicki & Smutnicki,
// "A fast taboo search algorithm for the job shop problem", Management Science 1996), with the
// pipeline's own constraints.
//
// A schedule is one order per worker. It is timed by the execution graph of
// planner/language/execution_graph.hpp (the direct network: a remote input arrives after its
// transfer time), which the search reorders in place, so the dependencies, the all-reduce and the
// optimizer's barrier or stagger are the rules every other consumer uses. Schedules compare by
// (steady-state period, first-iteration makespan, number of actions on a longest path of the last
// iteration walked, sum of the first iteration's end times). A move takes an action on such a
// path and moves it a few places on its worker; the search keeps a move only if the orders stay
// acyclic and every worker's activations stay within its memory limit, and goes to the best
// neighbour not forbidden by the tabu list. It stops at a lower bound on the period or when the
// budget of work is spent: the result depends only on the input, never on the clock.
#pragma once

#include <cstdint>
#include <vector>

#include "core/units.hpp"
#include "planner/language/schedule.hpp"
#include "planner/timing/cost_model.hpp"
#include "planner/timing/period.hpp"

namespace recycle::planner {

struct OrderSearchInput {
  /// Layout (any interleave), failed workers, routes and the optimizer mode (the objective).
  const Schedule* skeleton = nullptr;
  const CostModel* model = nullptr;        ///< compute costs; its network charges remote inputs
  std::vector<std::int32_t> memory_limit;  ///< chunks of activations, per stage (chunk_limit)
  /// Work allowed, in node visits: each evaluation costs the graph's nodes per iteration walked.
  std::int64_t budget = 0;
};

struct OrderSearchResult {
  std::vector<WorkerSchedule> workers;  ///< the best orders found
  SteadyState score;                    ///< their steady state on the direct network
  Nanos lower_bound = 0;                ///< no order of these routes has a shorter period
  std::int64_t work = 0;                ///< node visits spent
  std::int64_t starts_searched = 0;
};

/// Searches from each start in turn (each a complete schedule of compute actions F, I and W,
/// every live worker listed in the same order, as list_schedule returns them), moving on when a
/// start stops improving, until the lower bound is reached or the budget is spent. Never returns a
/// worse schedule than the first start.
[[nodiscard]] OrderSearchResult search_orders(
    const OrderSearchInput& input, const std::vector<std::vector<WorkerSchedule>>& starts);

/// A lower bound on the makespan of any order with these routes, costs and memory limits (chunks
/// per stage; empty: none): the longest dependency chain of one micro-batch, and for each worker
/// the earliest its work can start plus all of it (with several chunks a worker, its lowest
/// chunk's F and its highest chunk's I start its work). Before its first I a worker can run only
/// Fs, at most as many chunks as it may hold: the rest of its work follows that I. The compute
/// costs only (`model.compute`).
[[nodiscard]] Nanos makespan_lower_bound(const Schedule& skeleton, const CostModel& model,
                                         const std::vector<std::int32_t>& memory_limit = {});
[[nodiscard]] Nanos makespan_lower_bound(const Schedule& skeleton, const Costs& costs,
                                         const std::vector<std::int32_t>& memory_limit = {});

/// A lower bound on the steady-state period of any order with these routes, costs and memory
/// limits (chunks per stage; empty: none) under the skeleton's optimizer mode, on the direct
/// network of `model`. Each worker's iteration ends on its compute stream with its stage's
/// gradient all-reduce (over the stage's live workers) and its optimizer step. With the barrier:
/// the makespan's bound with these limits, plus the least all-reduce and the least step (the
/// iteration starts after a step and ends with an all-reduce). Staggered, every worker runs one
/// iteration's work, its all-reduce and its step within each period, and before its first I it
/// can run only Fs, at most as many as it may hold, while that I waits for the chain of Fs down
/// to the last stage and Is back: work + max(0, chain - held Fs) + all-reduce + step, the largest
/// over the workers. With two weight versions (the skeleton's weight_versions, PipeDream-2BW) a
/// worker's lists carry the last iteration's backwards into that wait: no idle time counts.
[[nodiscard]] Nanos period_lower_bound(const Schedule& skeleton, const CostModel& model,
                                       const std::vector<std::int32_t>& memory_limit = {});
/// The same on compute costs alone (CostModel::compute_only: a free network).
[[nodiscard]] Nanos period_lower_bound(const Schedule& skeleton, const Costs& costs,
                                       const std::vector<std::int32_t>& memory_limit = {});

}  // namespace recycle::planner
