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
//     idle time, within the memory limit. On any base schedule (RecycleOptions::base): the
//     interleaved one and the V-shaped ones run several chunks a worker, which the candidates,
//     the list scheduler and the search order together; the base's own orders are a candidate
//     without failures, and its memory share is one of the limits tried.
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
#include <string_view>
#include <vector>

#include "planner/candidates.hpp"
#include "planner/language/schedule.hpp"
#include "planner/timing/cost_model.hpp"
#include "planner/timing/period.hpp"

namespace recycle::planner {

/// The base schedules ReCycle plans on, in the order `--help` lists them: the fault-free schedule
/// a job runs, whose orders the planner starts from and whose memory share it keeps.
[[nodiscard]] const std::vector<std::string>& recycle_base_names();
/// The base ReCycle plans on for a job that runs `schedule`: the schedule itself when it is one of
/// recycle_base_names (pipedream-flush: 1f1b), else 1f1b (one chunk a worker: gpipe, zb-h1 and
/// zb-h2 jobs re-route onto 1F1B's orders and memory share).
[[nodiscard]] std::string recycle_base_for(std::string_view schedule);

struct RecycleOptions {
  /// The job's layout; its interleave and placement are the base's (layout_for): 1 chunk a
  /// worker for 1f1b, any number for interleaved, 2 in a V for zb-v and dualpipe-v.
  Layout layout;
  /// The base schedule (recycle_base_names; pipedream-flush is 1f1b). InputError naming `--base`
  /// for another, and (as generate_fault_free) for a layout the base cannot run.
  std::string base = "1f1b";
  std::vector<WorkerId> failed;  ///< sorted, unique, in range
  /// Compute costs per virtual stage (empty: F = I = W = 1) and the network (CostModel: free
  /// unless made from a profile), which the objective charges transfers on.
  CostModel model;
  /// Micro-batches of activations per worker; default: the base's peak (pp for 1F1B).
  std::optional<std::int32_t> memory_limit;
  bool staggered_optimizer = true;  ///< the optimizer mode the plan runs (and is made) for
  RunOptions run;                   ///< how it will run (OrderPlanOptions::run)
  bool defer_rerouted_w = true;     ///< decoupled backprop for re-routed micro-batches
  /// Work for the order search (planner/candidates.hpp), in node visits; 0: the best candidate.
  std::int64_t search_work = kDefaultSearchWork;
  /// Above this many actions, fewer candidates (OrderPlanOptions::timed_actions).
  std::int64_t timed_actions = kTimedActions;
  /// Candidates kept from a plan of the same options but the search's work (OrderPlanOptions::
  /// memo); nullptr: none.
  CandidateMemo* memo = nullptr;
};

struct RecyclePlan {
  bool feasible = false;
  std::string reason;            ///< why not, when infeasible
  std::int32_t dead_stage = -1;  ///< the stage with no live replica, if that is why
  Schedule schedule;             ///< compute-only; generator "recycle"
  SteadyState estimate;          ///< the objective (OrderPlan::estimate)
};

/// Routes every micro-batch of every failed worker to a live peer of its stage (see 1. above; all
/// of the stage's chunks of a micro-batch go to the same peer),
/// transfers timed with `model` (a free network: by load alone). Requires every stage to have a
/// live worker.
[[nodiscard]] std::vector<Route> balanced_routes(const Layout& layout,
                                                 const std::vector<WorkerId>& failed,
                                                 const CostModel& model = {});

/// Per stage, the micro-batches of activations a plan for `options` may hold: the given limit,
/// else the base's share (its peak, at least 1F1B's pp), each lowered to what fits the model's
/// memory (planner/timing/memory.hpp, planning_limits). InputError as plan_recycle.
[[nodiscard]] std::vector<std::int32_t> recycle_memory_limits(const RecycleOptions& options);

/// The adaptive schedule; infeasible (with the reason) when some stage has no live replica.
[[nodiscard]] RecyclePlan plan_recycle(const RecycleOptions& options);

/// An upper bound on plan_recycle(options).estimate.period from one list schedule
/// (planner/candidates.hpp, period_ceiling), where the plan's estimate is on the direct network
/// (options.run on it, or a free network) and the base is not 2bw; nullopt otherwise, without
/// failures, or when some stage has no live replica. What tells a replay that a plan runs at least
/// as fast as some time without making it.
[[nodiscard]] std::optional<Nanos> recycle_period_ceiling(const RecycleOptions& options);

/// A lower bound on the steady-state period of any ReCycle plan for `options` (its routes, costs,
/// network, memory limits, optimizer mode and, on a 2bw base, two weight versions:
/// planner/order_search.hpp period_lower_bound), found without
/// planning: what ranks failure sets where planning each would cost too much. Requires every stage
/// to have a live worker.
[[nodiscard]] Nanos recycle_period_bound(const RecycleOptions& options);

/// The naive baseline: the same routes, each worker running its own and re-routed micro-batches
/// in plain 1F1B order (fused B first, then F while the stage holds fewer than pp - s
/// micro-batches; no deferral, no stagger).
[[nodiscard]] RecyclePlan plan_naive_reroute(const Layout& layout,
                                             const std::vector<WorkerId>& failed);

}  // namespace recycle::planner
