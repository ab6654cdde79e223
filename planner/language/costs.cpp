#include "planner/language/costs.hpp"

namespace recycle::planner {

Costs Costs::uniform(std::int32_t virtual_stages, StageCost cost) {
  return Costs{std::vector<StageCost>(static_cast<std::size_t>(virtual_stages), cost), {}};
}

Nanos Costs::duration(const Action& action) const noexcept {
  const auto vs = static_cast<std::size_t>(action.virtual_stage);
  if (action.type == ActionType::kOptimizer) return vs < optimizer.size() ? optimizer[vs] : 0;
  if (vs >= virtual_stages.size()) return 0;
  const StageCost& c = virtual_stages[vs];
  switch (action.type) {
    case ActionType::kForward:
      return c.forward;
    case ActionType::kBackwardInput:
      return c.backward_input;
    case ActionType::kBackwardWeight:
      return c.backward_weight;
    case ActionType::kBackward:
      return c.backward_input + c.backward_weight;
    default:
      return 0;
  }
}

}  // namespace recycle::planner
