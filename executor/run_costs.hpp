// What a run's own actions cost: the costs the simulator would have been given had the run's
// operations been timed as they ran. `recycle validate` predicts the iteration again from them,
// so that its error splits into what the schedule model misses (the prediction from the run's
// own costs against the measurement) and what the costs timed before the run miss (the two
// predictions against each other).
#pragma once

#include "executor/runtime.hpp"
#include "planner/language/costs.hpp"

namespace recycle::executor {

/// Per virtual stage, the median measured duration of its F, I and W over every worker's actions
/// that count (not in a dropped iteration, nor in iteration 0, the warm-up); where only B (I and
/// W together) ran, its median split in the ratio of `timed`'s I to W for the stage; per stage
/// the median OPT. An action's duration is its processor time where the run recorded it
/// (TimedAction::cpu_ns: workers sharing cores), else its wall time.
/// A cost with no measured action keeps `timed`'s. Not meaningful for workers sharing a GPU: an
/// action's wall time then includes the others' work and no processor time was recorded.
[[nodiscard]] planner::Costs run_costs(const RunResult& run, const planner::Costs& timed);

}  // namespace recycle::executor
