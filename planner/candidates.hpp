// How the planners choose worker orders, shared by ZB-H2 (planner/generators.hpp) and ReCycle's
// adaptive plans (planner/recycle_planner.hpp).
//
//  1. Candidates: list schedules (planner/list_scheduler.hpp) that differ in how much memory each
//     stage may use (the limit everywhere; the base schedule's share, pp - s for 1F1B; that share
//     + 2 micro-batches; each capped by the limit) and in how far they look ahead (whether a W, or
//     an F, waits for a gradient about to arrive); on a fault-free layout also the base
//     schedule's own orders (for 1F1B: with its backward split into I and W, and ZB-H1), when
//     they fit the memory. Any interleave and placement: with several chunks a worker, limits
//     count chunks (chunk_limit).
//  2. Objective: the steady-state period under the schedule's optimizer mode, then the first
//     iteration's makespan, on the direct network of planner/timing/period.hpp (transfer times from
//     the cost model, nothing on a free network). The first best candidate wins.
//  3. Search (optional, small layouts): the order search of planner/order_search.hpp from the
//     winner and from list schedules whose ties between micro-batches follow random ranks.
//  4. On a network that is not free, small layouts: the candidates and the search's result are
//     ranked again by their steady state on the network the plan runs on (OrderPlanOptions::run;
//     by default torch's runtime, where each worker's transfers queue on one stream), which the
//     direct network leaves out.
// Layouts with more than OrderPlanOptions::timed_actions actions (kTimedActions by default),
// where timing a candidate over iterations costs several times its list schedule, keep four
// candidates (the limit with no look-ahead, with the W look-ahead, with both; 1F1B's share + 2
// with none), compare them by their first iteration's makespan, which bounds the period from
// above, and time only the one chosen by its period. docs/recycle.md reports what this costs
// against all candidates compared by period.
// Deterministic: candidates run on threads but are compared in a fixed order, and the search
// counts work, not time.
#pragma once

#include <cstdint>
#include <vector>

#include "planner/language/schedule.hpp"
#include "planner/timing/cost_model.hpp"
#include "planner/timing/period.hpp"

namespace recycle::planner {

/// The search's default work: about a second on one core at most, less when it reaches the lower
/// bound first.
inline constexpr std::int64_t kDefaultSearchWork = 40'000'000;
/// Layouts with more actions per iteration (3 x dp x pp x microbatches) keep the best candidate:
/// the search would get too few moves to matter.
inline constexpr std::int64_t kSearchActions = 20'000;
/// Layouts with more actions compare fewer candidates, by their first iteration (see above).
inline constexpr std::int64_t kTimedActions = 100'000;

/// Steps 1 and 2 of plan_orders (the candidate chosen before the search) for one skeleton and one
/// set of options but the search's work: a caller that plans the same failure set first without
/// the search and then with it (the replay ranks failure sets by the first, then plans the one it
/// runs) keeps them here, and the second plan starts from them instead of making them again. The
/// same plan either way.
struct CandidateMemo {
  bool filled = false;
  std::vector<WorkerId> failed;         ///< the skeleton's, to check it is the same failure set
  std::vector<WorkerSchedule> workers;  ///< the chosen candidate's orders
  SteadyState estimate;                 ///< and its estimate
};

struct OrderPlanOptions {
  std::vector<std::int32_t> memory_limit;  ///< micro-batches of activations, per stage
  bool defer_rerouted_w = true;            ///< re-routed Ws after the worker's own
  /// Candidates beside the list schedules, each one pipeline's orders (per stage, owner 0; F, I
  /// and W), tried on a fault-free skeleton (dp 1) when they fit the memory: the base schedule's
  /// own orders (planner/generators.hpp, base_orders).
  std::vector<std::vector<std::vector<Action>>> fault_free_orders;
  /// Chunks of activations the base schedule holds per stage, the middle memory variant of step
  /// 1; empty: 1F1B's pp - s.
  std::vector<std::int32_t> share;
  std::int64_t search_work = 0;  ///< 0: no search
  /// Above this many actions per iteration, the four candidates compared by their first
  /// iteration (see above); a replay, which plans hundreds of failure sets, sets 0.
  std::int64_t timed_actions = kTimedActions;
  /// How the plan will run. On a network that is not free the direct estimate leaves out the
  /// communication streams' waits, so on layouts up to kSearchActions the candidates and the
  /// search's result are finally ranked by their steady state run this way.
  RunOptions run;
  /// Where a plan that ends after step 3 (no ranking on the run network) takes steps 1 and 2
  /// from, when filled, or leaves them; nullptr: none.
  CandidateMemo* memo = nullptr;
};

struct OrderPlan {
  std::vector<WorkerSchedule> workers;  ///< every live worker's compute actions
  /// The objective: as `run` says when the final ranking took place, else on the direct network.
  SteadyState estimate;
  bool ranked_on_run = false;  ///< whether step 4 took place (the estimate is on `run`)
};

/// The best orders for the routes and optimizer mode of `skeleton` (any interleave).
[[nodiscard]] OrderPlan plan_orders(const Schedule& skeleton, const CostModel& model,
                                    const OrderPlanOptions& options);

/// An upper bound on the period plan_orders estimates for the same inputs, from one list schedule:
/// the first-iteration makespan of its first candidate (the limit everywhere, no look-ahead) on
/// the direct network, its computes' (the list schedule's) plus the longest all-reduce and the
/// longest optimizer step. A schedule's steady-state period is at most its first iteration's
/// makespan (iteration k + 1 can run as iteration 1 did, started when iteration k ended); the
/// candidate chosen has the least period or, on large layouts, the least computes' makespan (the
/// same collectives and steps follow every candidate), and the search only improves on it, so
/// whichever wins its period is at most this. Holds where the estimate is on the direct network
/// (no final ranking on options.run: OrderPlan::ranked_on_run false).
[[nodiscard]] Nanos period_ceiling(const Schedule& skeleton, const CostModel& model,
                                   const OrderPlanOptions& options);

}  // namespace recycle::planner
