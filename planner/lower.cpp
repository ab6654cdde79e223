#include "planner/lower.hpp"

#include "core/error.hpp"

namespace recycle::planner {

Schedule lower(const Schedule& schedule) {
  const Layout& layout = schedule.layout;
  const RouteTable routes(schedule);
  const std::int32_t last = layout.virtual_stages() - 1;

  Schedule out = schedule;
  for (WorkerSchedule& worker : out.workers) {
    const WorkerId self = worker.id;
    std::vector<Action> lowered;
    lowered.reserve(worker.actions.size() * 2 + 2);
    const auto remote = [&](const Action& a, std::int32_t virtual_stage) {
      return routes.worker_of(a.owner, virtual_stage, a.microbatch) != self;
    };
    const auto with_type = [](Action a, ActionType type, std::int32_t virtual_stage) {
      a.type = type;
      a.virtual_stage = virtual_stage;
      return a;
    };
    for (const Action& a : worker.actions) {
      RECYCLE_ASSERT(is_compute(a.type), "lower() takes a compute-only schedule");
      const std::int32_t vs = a.virtual_stage;
      const bool backward = a.type == ActionType::kBackwardInput || a.type == ActionType::kBackward;
      if (a.type == ActionType::kForward && vs > 0 && remote(a, vs - 1)) {
        lowered.push_back(with_type(a, ActionType::kRecvF, vs));
      }
      if (backward && vs < last && remote(a, vs + 1))
        lowered.push_back(with_type(a, ActionType::kRecvB, vs));
      lowered.push_back(a);
      if (a.type == ActionType::kForward && vs < last && remote(a, vs + 1)) {
        lowered.push_back(with_type(a, ActionType::kSendF, vs));
      }
      if (backward && vs > 0 && remote(a, vs - 1))
        lowered.push_back(with_type(a, ActionType::kSendB, vs));
    }
    lowered.push_back(Action{ActionType::kReduceGrad, self.stage, -1, self.dp});
    lowered.push_back(Action{ActionType::kOptimizer, self.stage, -1, self.dp});
    worker.actions = std::move(lowered);
  }
  return out;
}

Schedule strip_to_compute(const Schedule& schedule) {
  Schedule out = schedule;
  for (WorkerSchedule& worker : out.workers) {
    std::erase_if(worker.actions, [](const Action& a) { return !is_compute(a.type); });
  }
  return out;
}

}  // namespace recycle::planner
