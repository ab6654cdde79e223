// Planner costs from a profile: each stage's F, I and W times split evenly over its interleave
// chunks (one chunk holds 1/V of the stage's layers), the profile's loss added to the last virtual
// stage's I (wherever the placement puts that chunk), and the stage's optimizer step.
#pragma once

#include <string>

#include "planner/language/costs.hpp"
#include "planner/language/schedule.hpp"
#include "profiles/profile.hpp"

namespace recycle::planner {

/// Throws InputError naming `source` (the profile's file) when its stage count is not layout.pp.
[[nodiscard]] Costs costs_from_profile(const profiles::Profile& profile, const Layout& layout,
                                       const std::string& source);

}  // namespace recycle::planner
