// Plan table files, format "recycle.plan-table/1" (docs/formats.md): the layout, the memory
// limit, the failure bound, and one schedule per canonical failure set, in canonical labels.
#pragma once

#include <string>

#include "planner/plan_table.hpp"

namespace recycle::planner {

[[nodiscard]] std::string to_json(const PlanTable& table);
[[nodiscard]] PlanTable plan_table_from_json(const std::string& text, const std::string& source);
[[nodiscard]] PlanTable load_plan_table(const std::string& path);

}  // namespace recycle::planner
