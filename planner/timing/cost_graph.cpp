#include "planner/timing/cost_graph.hpp"

#include <span>

#include "planner/language/execution_graph_build.hpp"
#include "planner/language/lower.hpp"
#include "planner/language/steady_state.hpp"

namespace recycle::planner {

namespace {

/// Times from a cost model: compute and optimizer from its costs, transfers and all-reduces from
/// its cluster and bytes.
struct ModelDurations {
  const CostModel& model;

  [[nodiscard]] Nanos action(WorkerId, const Action& a) const { return model.compute.duration(a); }
  [[nodiscard]] Nanos transfer(WorkerId from, WorkerId to, const Action& send) const {
    return model.cluster.transfer_time(from, to, model.send_bytes(send));
  }
  [[nodiscard]] Nanos all_reduce(std::int32_t stage, std::span<const WorkerId> peers) const {
    return model.all_reduce_time(stage, peers);
  }
};

}  // namespace

ExecutionGraph timed_graph(const Schedule& schedule, const ActionIndex& index,
                           const CostModel& model, const GraphOptions& options,
                           const std::string& source) {
  return ExecutionGraph(schedule, index, ModelDurations{model}, options, source);
}

ExecutionGraph timed_graph(const Schedule& schedule, const CostModel& model,
                           const GraphOptions& options, const std::string& source) {
  return timed_graph(schedule, ActionIndex(schedule), model, options, source);
}

Schedule lower(const Schedule& schedule, const CostModel& model, bool eager_sends) {
  const ActionIndex index(schedule);
  GraphOptions options;
  options.staggered_optimizer = schedule.staggered_optimizer;
  GraphOptions run = options;
  run.network = Network::kRuntime;
  run.eager_sends = eager_sends;
  return lower(schedule, index, timed_graph(schedule, index, model, options),
               [&](const Schedule& lowered) -> std::optional<Nanos> {
                 const auto st = steady_state(timed_graph(lowered, model, run));
                 return st ? std::optional<Nanos>(st->period) : std::nullopt;
               });
}

}  // namespace recycle::planner
