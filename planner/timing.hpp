// As-soon-as-possible timing of a schedule: every action starts when the previous action on its
// worker has ended and the actions it depends on (docs/architecture.md, "Semantics") have ended.
// Communication is free here; the simulator (sim/) adds the network. Used for text timelines, the
// PyTorch CSV time grid, and the planners' own estimates.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "core/units.hpp"
#include "planner/costs.hpp"
#include "planner/schedule.hpp"

namespace recycle::planner {

struct ActionTime {
  Nanos start = 0;
  Nanos end = 0;
};

struct Timeline {
  std::vector<std::vector<ActionTime>> workers;  ///< parallel to Schedule::workers[i].actions
  Nanos makespan = 0;                            ///< latest end over all actions
};

using DurationFn = std::function<Nanos(WorkerId, const Action&)>;

/// Times one iteration of `schedule`. Returns nullopt if the schedule deadlocks (a dependency
/// cycle); run planner/validator.hpp for the reason.
[[nodiscard]] std::optional<Timeline> compute_timeline(const Schedule& schedule,
                                                       const DurationFn& duration);
[[nodiscard]] std::optional<Timeline> compute_timeline(const Schedule& schedule,
                                                       const Costs& costs);

}  // namespace recycle::planner
