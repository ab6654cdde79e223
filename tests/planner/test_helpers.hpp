// Shorthands shared by the planner tests: action constructors, generated schedules, and a
// readable list of violations for failure messages.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "planner/generators.hpp"
#include "planner/language/failures.hpp"
#include "planner/language/validator.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/cost_model.hpp"

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
  options.model = CostModel::compute_only(costs);
  options.memory_limit = memory_limit;
  return generate_fault_free(name, options);
}

inline Schedule generate(const std::string& name, Layout layout,
                         std::optional<std::int32_t> memory_limit) {
  return generate(name, layout, Costs{}, memory_limit);
}

/// An empty schedule of `layout` with `failed` (text as for --failed) and balanced routes: the
/// skeleton the list scheduler and the order search fill.
inline Schedule skeleton(const Layout& layout, const char* failed = "") {
  Schedule s;
  s.layout = layout;
  s.failed = parse_failures(failed, layout);
  s.routes = balanced_routes(layout, s.failed);
  return s;
}

/// DP 2, PP 2, M 2 with worker (1,1) failed: pipeline 1's micro-batches run stage 1 on (0,1).
inline Schedule rerouted() {
  Schedule s;
  s.generator = "hand";
  s.layout = Layout{2, 2, 2, 1};
  s.failed = {{1, 1}};
  s.routes = {{1, 1, 0, 0}, {1, 1, 1, 0}};
  s.workers = {
      {{0, 0}, {act(F, 0, 0), act(F, 0, 1), act(B, 0, 0), act(B, 0, 1)}},
      {{0, 1},
       {act(F, 1, 0), act(I, 1, 0), act(F, 1, 0, 1), act(I, 1, 0, 1), act(F, 1, 1), act(I, 1, 1),
        act(W, 1, 0), act(F, 1, 1, 1), act(I, 1, 1, 1), act(W, 1, 0, 1), act(W, 1, 1),
        act(W, 1, 1, 1)}},
      {{1, 0}, {act(F, 0, 0, 1), act(F, 0, 1, 1), act(B, 0, 0, 1), act(B, 0, 1, 1)}},
  };
  return s;
}

inline std::string show(const std::vector<Violation>& violations) {
  std::string text;
  for (const Violation& v : violations)
    text += std::string(rule_name(v.rule)) + ": " + v.message + "\n";
  return text;
}

/// Checks two schedules field by field, so a difference names the worker.
inline void check_same(const Schedule& got, const Schedule& want) {
  CHECK(got.generator == want.generator);
  CHECK(got.layout == want.layout);
  CHECK(got.failed == want.failed);
  CHECK(got.routes == want.routes);
  REQUIRE(got.workers.size() == want.workers.size());
  for (std::size_t i = 0; i < got.workers.size(); ++i) {
    INFO("worker " << i);
    CHECK(got.workers[i].id == want.workers[i].id);
    CHECK(got.workers[i].actions == want.workers[i].actions);
  }
}

}  // namespace recycle::planner::testing
