#include "planner/timing/profile_costs.hpp"

#include "core/error.hpp"

namespace recycle::planner {

Costs costs_from_profile(const profiles::Profile& profile, const Layout& layout,
                         const std::string& source) {
  if (static_cast<std::int32_t>(profile.stages.size()) != layout.pp) {
    throw InputError(source, "the profile has " + std::to_string(profile.stages.size()) +
                                 " stages but the pipeline has " + std::to_string(layout.pp) +
                                 " stages");
  }
  Costs costs;
  const Nanos chunks = layout.interleave;
  costs.virtual_stages.resize(static_cast<std::size_t>(layout.virtual_stages()));
  for (std::int32_t v = 0; v < layout.virtual_stages(); ++v) {
    const profiles::StageProfile& s = profile.stages[static_cast<std::size_t>(layout.stage_of(v))];
    costs.virtual_stages[static_cast<std::size_t>(v)] = {
        s.forward / chunks, s.backward_input / chunks, s.backward_weight / chunks};
  }
  costs.virtual_stages.back().backward_input += profile.loss;
  for (const profiles::StageProfile& s : profile.stages) costs.optimizer.push_back(s.optimizer);
  return costs;
}

}  // namespace recycle::planner
