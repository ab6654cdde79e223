// Local search over the workers' action orders, to shorten a list schedule: a tabu search on the
// critical path (the classic job-shop method: Nowicki & Smutnicki, "A fast taboo search algorithm
// for the job shop problem", Management Science 1996), with the pipeline's own constraints.
//
// A schedule is one order per worker. Its makespan is the longest path through the dependencies
// (F before the next stage's F, I after its F and the next stage's I, W after its I) and the
// worker orders, with every action taking its cost (compute_timeline's ASAP semantics, free
// communication). A move takes an action on a longest path and moves it a few places on its
// worker; the search keeps a move only if the orders stay acyclic and every worker's activations
// stay within its memory limit, and goes to the best neighbour not forbidden by the tabu list,
// comparing (makespan, number of critical actions, sum of end times). It stops at the lower bound
// or when the budget of evaluated neighbours is spent: the result depends only on the input, never
// on the clock.
#pragma once

#include <cstdint>
#include <vector>

#include "core/units.hpp"
#include "planner/costs.hpp"
#include "planner/schedule.hpp"

namespace recycle::planner {

struct OrderSearchInput {
  const Schedule* skeleton = nullptr;  ///< layout (interleave 1), failed workers and routes
  const Costs* costs = nullptr;
  std::vector<std::int32_t> memory_limit;  ///< micro-batches of activations, per stage
  /// Work allowed, in action visits: each neighbour evaluated costs the number of actions.
  std::int64_t budget = 0;
};

struct OrderSearchResult {
  std::vector<WorkerSchedule> workers;  ///< the best orders found
  Nanos makespan = 0;
  Nanos lower_bound = 0;  ///< no order of these routes is shorter (makespan_lower_bound)
  std::int64_t work = 0;  ///< action visits spent
  std::int64_t starts_searched = 0;
};

/// Searches from each start in turn (each a complete schedule of compute actions F, I and W,
/// every live worker listed in the same order, as list_schedule returns them), moving on when a
/// start stops improving, until the lower bound is reached or the budget is spent. Never returns a
/// longer schedule than the first start.
[[nodiscard]] OrderSearchResult search_orders(
    const OrderSearchInput& input, const std::vector<std::vector<WorkerSchedule>>& starts);

/// A lower bound on the makespan of any order with these routes and costs: the longest dependency
/// chain of one micro-batch, and for each worker the earliest its work can start plus all of it.
[[nodiscard]] Nanos makespan_lower_bound(const Schedule& skeleton, const Costs& costs);

}  // namespace recycle::planner
