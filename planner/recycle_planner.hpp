// The ReCycle planner (Gandhi et al., SOSP '24): an adaptive schedule for any set of failed
// workers, with no spare servers and the same global batch.
//
//  1. Re-route: the micro-batches of a failed worker (d, s) are processed at stage s by live
//     peers (d', s); the upstream (d, s-1) sends them there and the peer sends on to (d, s+1).
//     Balanced by load: a peer that already carries re-routed work, or whose neighbouring stages
//     in its pipeline do, takes less.
//  2. Order: list scheduling (planner/list_scheduler.hpp) with the backward split into I and W:
//     I stays on the critical path, the Ws of re-routed micro-batches are deferred into idle time,
//     within the memory limit.
//  3. Search (small layouts): a tabu search over the orders (planner/order_search.hpp) from the
//     best list schedule and from list schedules with random micro-batch ranks, best first, within
//     a fixed budget of work, so the plan does not depend on the machine.
//  4. Staggered optimizer: a property of the run, not of the lists (sim/ models it): each stage
//     steps its optimizer when its own Ws are done, so deferred Ws fill the gap before the stage's
//     next forward.
// Plans are made on the canonical form of the failure set (planner/failures.hpp) and relabelled.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "planner/costs.hpp"
#include "planner/schedule.hpp"

namespace recycle::planner {

/// The order search's default work: about 0.3 s on one core at most, less when it reaches the
/// lower bound first.
inline constexpr std::int64_t kDefaultSearchWork = 40'000'000;
/// Layouts with more actions per iteration (3 x dp x pp x microbatches) keep the list schedule:
/// the search would get too few moves to matter.
inline constexpr std::int64_t kSearchActions = 20'000;

struct RecycleOptions {
  Layout layout;
  std::vector<WorkerId> failed;              ///< sorted, unique, in range
  Costs costs;                               ///< per virtual stage; empty: F = I = W = 1
  std::optional<std::int32_t> memory_limit;  ///< micro-batches per worker; default pp (1F1B's peak)
  bool defer_rerouted_w = true;              ///< decoupled backprop for re-routed micro-batches
  /// Work for the order search (step 3 above), in action visits; 0: the list schedule as it is.
  std::int64_t search_work = kDefaultSearchWork;
};

struct RecyclePlan {
  bool feasible = false;
  std::string reason;            ///< why not, when infeasible
  std::int32_t dead_stage = -1;  ///< the stage with no live replica, if that is why
  Schedule schedule;             ///< compute-only; generator "recycle"
};

/// Routes every micro-batch of every failed worker to a live peer of its stage (see 1. above).
/// Requires every stage to have a live worker.
[[nodiscard]] std::vector<Route> balanced_routes(const Layout& layout,
                                                 const std::vector<WorkerId>& failed);

/// The adaptive schedule; infeasible (with the reason) when some stage has no live replica.
[[nodiscard]] RecyclePlan plan_recycle(const RecycleOptions& options);

/// The naive baseline: the same routes, each worker running its own and re-routed micro-batches
/// in plain 1F1B order (fused B first, then F while the stage holds fewer than pp - s
/// micro-batches; no deferral, no stagger).
[[nodiscard]] RecyclePlan plan_naive_reroute(const Layout& layout,
                                             const std::vector<WorkerId>& failed);

}  // namespace recycle::planner
