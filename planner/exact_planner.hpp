// The exact ReCycle planner: the heuristic's problem (planner/recycle_planner.hpp) solved as a
// MILP with CBC, for small instances (to measure the heuristic's optimality gap) and for users
// who can wait (`--exact`, with a time limit).
//
// Concepts:
//  - Task: one (owner, virtual stage, micro-batch); its F, I and W run on the worker the routes
//    give (a route moves every chunk of the stage's micro-batch, several chunks a worker too).
//    The routes are the heuristic's (balanced_routes on the canonical failure set), so exact and
//    heuristic differ only in the order of each worker's actions.
//  - Incumbent: the heuristic's schedule. Its makespan bounds every start (no better schedule
//    starts anything later than that allows), and it is kept when nothing better is found.
//  - Time-indexed formulation (whole-unit costs): "is there a schedule that ends by H?", with a
//    binary per action and time unit meaning "started by then"; asked for H = lower bound, +1,
//    ... below the incumbent's makespan, so the first yes is optimal and each no raises the
//    proven lower bound. Its relaxation sees each worker's load over time.
//  - Disjunctive formulation (any costs): a start time per action and a binary per pair of
//    actions on one worker (which runs first), big-Ms from the time windows, the incumbent as
//    MIP start, the makespan minimized.
//  - Memory: when an F starts, the chunks whose F ran and whose W has not, plus this one, fit the
//    limit in chunks (chunk_limit: the validator's count).
//  - Objective: the MILP minimizes one iteration's makespan. With the optimizer barrier that is
//    the period's (every iteration starts from the barrier); with a staggered optimizer the period
//    of the MILP's schedule is checked on the execution graph (planner/timing/period.hpp) and the
//    heuristic's plan is kept when its (period, makespan) is better.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.hpp"
#include "planner/candidates.hpp"
#include "planner/language/costs.hpp"
#include "planner/language/schedule.hpp"
#include "planner/recycle_planner.hpp"

namespace recycle::planner {

enum class Formulation : std::uint8_t {
  kAuto,         ///< time-indexed when the costs are whole units of a small grain, else disjunctive
  kTimeIndexed,  ///< needs whole-unit costs
  kDisjunctive,
};

/// "auto", "time-indexed", "disjunctive".
[[nodiscard]] std::string_view formulation_name(Formulation formulation) noexcept;

struct ExactOptions {
  Layout layout;                             ///< as the base runs it (RecycleOptions::layout)
  std::string base = "1f1b";                 ///< the schedule ReCycle plans on (RecycleOptions)
  std::vector<WorkerId> failed;              ///< sorted, unique, in range
  Costs costs;                               ///< per stage, all positive; empty: F = I = W = 1
  std::optional<std::int32_t> memory_limit;  ///< micro-batches per worker; default pp
                                             ///< (interleave chunks each)
  Seconds time_limit = 60;                   ///< wall time for the whole call; then the best so far
  Formulation formulation = Formulation::kAuto;
  /// The optimizer mode the plan runs under (the heuristic's objective and the period check).
  bool staggered_optimizer = false;
  /// The order-search work of the heuristic plan that is the MIP start (RecycleOptions); 0: the
  /// list schedule alone.
  std::int64_t search_work = kDefaultSearchWork;
};

struct ExactResult {
  bool feasible = false;
  std::string reason;    ///< why not, when infeasible (a stage with no live replica)
  bool optimal = false;  ///< the MILP's makespan is proven optimal for these routes and memory
  Nanos makespan = 0;    ///< of `schedule`, by planner/language/timing.hpp
  Nanos period = 0;      ///< of `schedule`: its steady state (planner/timing/period.hpp)
  Nanos objective = 0;   ///< the shortest makespan found on these routes (the MILP's or the plan's)
  Nanos lower_bound = 0;  ///< proven: no schedule on these routes has a shorter makespan
  /// The makespan of the MILP's own best schedule (planner/language/timing.hpp), before it is
  /// compared with the heuristic's; 0 when the MILP found none shorter than the incumbent or did
  /// not run.
  Nanos milp_makespan = 0;
  Nanos heuristic_makespan = 0;  ///< of plan_recycle's schedule, the MIP start
  Nanos heuristic_period = 0;    ///< its steady state
  Schedule schedule;             ///< compute-only; generator "exact"; workers' actions by start
  Seconds solve_seconds = 0;     ///< wall time of the whole call
  /// The one used; kAuto: none was needed, the incumbent meets a lower bound.
  Formulation formulation = Formulation::kAuto;
  std::int32_t binaries = 0;  ///< the MILP's binary variables (its size)
};

/// Solves one iteration's ordering problem exactly, within `time_limit`.
[[nodiscard]] ExactResult plan_exact(const ExactOptions& options);

}  // namespace recycle::planner
