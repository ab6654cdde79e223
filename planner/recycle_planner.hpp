// The ReCycle planner (Gandhi et al., SOSP '24): an adaptive schedule for any set of failed
// workers, with no spare servers and the same global batch.
//
//  1. Re-route: the micro-batches of a failed worker (d, s) are processed at stage s by live
//     peers (d', s); the upstream (d, s-1) sends them there and the peer sends on to (d, s+1).
//     Balanced by load: a peer that already carries re-routed work takes less; among equally
//     loaded peers, the one the micro-batch reaches and leaves fastest (with a profile: a peer on
//     the node of the failed worker's neighbours), then one whose neighbouring stages carry less
//     re-routed work.
//  2. Order: the candidates and search of planner/candidates.hpp, with the backward split into I
//     and W: I stays on the critical path, the Ws of re-routed micro-batches are deferred into
//     idle time, within the memory limit.
//  3. Staggered optimizer: each stage steps its optimizer when its own Ws are reduced, so the next
//     iteration's forwards fill the gap its deferred Ws leave. The plan's objective is the
//     steady-state period under the optimizer mode it is made for (planner/timing/period.hpp), so
//     the orders are chosen for what staggering buys.
// Plans are made on the canonical form of the failure set (planner/language/failures.hpp) and
// relabelled, when the cluster's pipelines are interchangeable; in their own labels otherwise.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "planner/candidates.hpp"
#include "planner/language/schedule.hpp"
#include "planner/timing/cost_model.hpp"
#include "planner/timing/period.hpp"

namespace recycle::planner {

struct RecycleOptions {
  Layout layout;
  std::vector<WorkerId> failed;  ///< sorted, unique, in range
  /// Compute costs per virtual stage (empty: F = I = W = 1) and the network (CostModel: free
  /// unless made from a profile), which the objective charges transfers on.
  CostModel model;
  std::optional<std::int32_t> memory_limit;  ///< micro-batches per worker; default pp (1F1B's peak)
  bool staggered_optimizer = true;           ///< the optimizer mode the plan runs (and is made) for
  RunOptions run;                            ///< how it will run (OrderPlanOptions::run)
  bool defer_rerouted_w = true;              ///< decoupled backprop for re-routed micro-batches
  /// Work for the order search (planner/candidates.hpp), in node visits; 0: the best candidate.
  std::int64_t search_work = kDefaultSearchWork;
  /// Above this many actions, fewer candidates (OrderPlanOptions::timed_actions).
  std::int64_t timed_actions = kTimedActions;
};

struct RecyclePlan {
  bool feasible = false;
  std::string reason;            ///< why not, when infeasible
  std::int32_t dead_stage = -1;  ///< the stage with no live replica, if that is why
  Schedule schedule;             ///< compute-only; generator "recycle"
  SteadyState estimate;          ///< the objective (OrderPlan::estimate)
};

/// Routes every micro-batch of every failed worker to a live peer of its stage (see 1. above),
/// transfers timed with `model` (a free network: by load alone). Requires every stage to have a
/// live worker.
[[nodiscard]] std::vector<Route> balanced_routes(const Layout& layout,
                                                 const std::vector<WorkerId>& failed,
                                                 const CostModel& model = {});

/// The adaptive schedule; infeasible (with the reason) when some stage has no live replica.
[[nodiscard]] RecyclePlan plan_recycle(const RecycleOptions& options);

/// A lower bound on the steady-state period of any ReCycle plan for `options` (its routes, costs,
/// memory limits and optimizer mode: planner/order_search.hpp period_lower_bound), found without
/// planning: what ranks failure sets where planning each would cost too much. Requires every stage
/// to have a live worker.
[[nodiscard]] Nanos recycle_period_bound(const RecycleOptions& options);

/// The naive baseline: the same routes, each worker running its own and re-routed micro-batches
/// in plain 1F1B order (fused B first, then F while the stage holds fewer than pp - s
/// micro-batches; no deferral, no stagger).
[[nodiscard]] RecyclePlan plan_naive_reroute(const Layout& layout,
                                             const std::vector<WorkerId>& failed);

}  // namespace recycle::planner
