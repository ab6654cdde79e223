#include "planner/plan_table_io.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/json.hpp"
#include "planner/language/failures.hpp"
#include "planner/language/schedule_io.hpp"
#include "planner/language/validator.hpp"

namespace recycle::planner {

namespace {
constexpr const char* kFormat = "recycle.plan-table/1";
}  // namespace

std::string to_json(const PlanTable& table) {
  const Layout& l = table.layout;
  std::string out = "{\n";
  out += std::string(R"(  "format": ")") + kFormat + "\",\n";
  out += R"(  "layout": )" + layout_json(l) + ",\n";
  out += R"(  "base": )" + nlohmann::json(table.base).dump() + ",\n";
  out += R"(  "memory_limit": )" + std::to_string(table.memory_limit) + ",\n";
  out += R"(  "max_failures": )" + std::to_string(table.max_failures) + ",\n";
  out += R"(  "plans": [)";
  bool first = true;
  for (const auto& [key, plan] : table.plans) {
    if (!plan.feasible) continue;
    out += first ? "\n" : ",\n";
    first = false;
    out += R"({"failed": ")" + key + R"(", "schedule": )" + to_json(plan.schedule) + "}";
  }
  out += "\n  ]\n}\n";
  return out;
}

PlanTable plan_table_from_json(const std::string& text, const std::string& source) {
  const nlohmann::json root = parse_json(text, source);
  const JsonView view(root, source);
  const JsonView format = view.at("format");
  format.check_format(kFormat);
  PlanTable table;
  table.layout = read_layout(view.at("layout"));
  // Tables written before ReCycle planned on other bases are 1F1B's.
  if (const auto base = view.find("base")) {
    table.base = base->as_string();
    const auto& names = recycle_base_names();
    if (std::find(names.begin(), names.end(), table.base) == names.end())
      base->fail("is not a schedule ReCycle plans on");
  }
  table.memory_limit =
      static_cast<std::int32_t>(view.at("memory_limit").as_int(1, kMaxMicrobatches));
  table.max_failures =
      static_cast<std::int32_t>(view.at("max_failures").as_int(0, table.layout.workers()));
  for (const JsonView& item : view.at("plans").items()) {
    RecyclePlan plan;
    plan.feasible = true;
    plan.schedule = schedule_from_json(item.at("schedule"));
    if (!(plan.schedule.layout == table.layout))
      item.at("schedule").at("layout").fail("differs from the table's layout");
    const std::string key = item.at("failed").as_string();
    if (canonicalize(plan.schedule.failed, table.layout).key != key) {
      item.at("failed").fail("does not match the schedule's failed workers in canonical form");
    }
    // Trusted no more than any schedule file: valid in its own labels, under the table's limit.
    ValidationOptions validation;
    validation.memory_limit = table.memory_limit;
    if (const std::string problem = summarize(validate(plan.schedule, validation));
        !problem.empty())
      item.at("schedule").fail(problem);
    if (!table.plans.emplace(key, std::move(plan)).second)
      item.at("failed").fail("a second plan for the same failure set");
  }
  return table;
}

PlanTable load_plan_table(const std::string& path) {
  return plan_table_from_json(read_text_file(path), path);
}

}  // namespace recycle::planner
