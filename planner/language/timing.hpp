// As-soon-as-possible timing of one iteration of a schedule: every action starts when the previous
// action on its stream has ended and the actions it depends on (planner/language/semantics.hpp)
// have ended, on a direct network (planner/language/execution_graph.hpp) where data moves in no
// time unless a cost model says otherwise. Used for text timelines, the PyTorch CSV time grid, and
// the planners' own estimates; planner/timing/period.hpp gives the steady state and sim/ the full
// record.
#pragma once

#include <optional>
#include <vector>

#include "core/units.hpp"
#include "planner/language/costs.hpp"
#include "planner/language/execution_graph.hpp"
#include "planner/language/schedule.hpp"

namespace recycle::planner {

struct ActionTime {
  Nanos start = 0;
  Nanos end = 0;
};

struct Timeline {
  std::vector<std::vector<ActionTime>> workers;  ///< parallel to Schedule::workers[i].actions
  Nanos makespan = 0;                            ///< latest end over all listed actions
};

using DurationFn = ActionDuration;

/// Times the first iteration of `schedule` (its optimizer mode; REDUCE_GRAD and OPT implied where
/// a worker lists none). Returns nullopt if the schedule deadlocks (a dependency cycle); run
/// planner/language/validator.hpp for the reason.
[[nodiscard]] std::optional<Timeline> compute_timeline(const Schedule& schedule,
                                                       const DurationFn& duration);
[[nodiscard]] std::optional<Timeline> compute_timeline(const Schedule& schedule,
                                                       const Costs& costs);

}  // namespace recycle::planner
