// Shorthands shared by the planner tests: action constructors, generated schedules, and a
// readable list of violations for failure messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "planner/generators.hpp"
#include "planner/validator.hpp"

namespace recycle::planner::testing {

inline constexpr ActionType F = ActionType::kForward;
inline constexpr ActionType I = ActionType::kBackwardInput;
inline constexpr ActionType W = ActionType::kBackwardWeight;
inline constexpr ActionType B = ActionType::kBackward;

inline Action act(ActionType type, std::int32_t virtual_stage, std::int32_t microbatch,
                  std::int32_t owner = 0) {
  return Action{type, virtual_stage, microbatch, owner};
}

inline Schedule generate(const std::string& name, Layout layout, const Costs& costs = {},
                         std::optional<std::int32_t> memory_limit = std::nullopt) {
  GeneratorOptions options;
  options.layout = layout;
  options.costs = costs;
  options.memory_limit = memory_limit;
  return generate_fault_free(name, options);
}

inline Schedule generate(const std::string& name, Layout layout,
                         std::optional<std::int32_t> memory_limit) {
  return generate(name, layout, Costs{}, memory_limit);
}

inline std::string show(const std::vector<Violation>& violations) {
  std::string text;
  for (const Violation& v : violations)
    text += std::string(rule_name(v.rule)) + ": " + v.message + "\n";
  return text;
}

}  // namespace recycle::planner::testing
