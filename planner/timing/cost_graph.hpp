// A schedule's execution graph with a cost model's times (planner/language/execution_graph.hpp
// holds the rules as edges; this says how long each node takes): compute and the optimizer step
// from the model's costs, transfers and all-reduces from its cluster and bytes. And what needs
// such a graph to do its work: the lowering on the model's times.
#pragma once

#include <string>

#include "planner/language/dependency_graph.hpp"
#include "planner/language/execution_graph.hpp"
#include "planner/language/schedule.hpp"
#include "planner/timing/cost_model.hpp"

namespace recycle::planner {

/// The graph of `schedule` timed by `model`; InputError naming `source` as ExecutionGraph's
/// constructors throw it. The graph reads actions from `schedule`, which must outlive it.
[[nodiscard]] ExecutionGraph timed_graph(const Schedule& schedule, const CostModel& model,
                                         const GraphOptions& options,
                                         const std::string& source = kUnnamedSchedule);
/// The same, reusing an ActionIndex of `schedule` that the caller has built.
[[nodiscard]] ExecutionGraph timed_graph(const Schedule& schedule, const ActionIndex& index,
                                         const CostModel& model, const GraphOptions& options,
                                         const std::string& source = kUnnamedSchedule);

/// lower() (planner/language/lower.hpp) with `model`'s times: its compute costs, and its transfer
/// times on the direct network (the data is made when it reaches its reader). Lists that run
/// across iterations keep the placement of lagged pairs that runs faster on the runtime network,
/// with `eager_sends` (GraphOptions::eager_sends) as the schedule will run.
[[nodiscard]] Schedule lower(const Schedule& schedule, const CostModel& model,
                             bool eager_sends = false);

}  // namespace recycle::planner
