// The exact planner's two formulations of one iteration's ordering problem (exact_problem.hpp),
// each solved through the solver-neutral MILP of planner/milp.hpp:
//  - time-indexed (whole-unit costs): "is there a schedule that ends by H?", asked for H = lower
//    bound, +1, ... below the incumbent's makespan, so the first yes is optimal and each no raises
//    the proven lower bound;
//  - disjunctive (any costs): a start time per action and a binary per pair of actions on one
//    worker, the incumbent as MIP start, the makespan minimized.
// Each fills the ExactResult's schedule (when it finds a better one), objective, bound, optimality,
// formulation and size.
#pragma once

#include "planner/exact_planner.hpp"
#include "planner/exact_problem.hpp"
#include "planner/milp.hpp"

namespace recycle::planner::exact {

/// Whether the time-indexed model fits (asked for the largest horizon it would be built for).
[[nodiscard]] bool time_indexed_fits(const Problem& pr);
void solve_time_indexed(const Problem& pr, Clock::time_point deadline, ExactResult& out);
void solve_disjunctive(const Problem& pr, Clock::time_point deadline, ExactResult& out);

}  // namespace recycle::planner::exact
