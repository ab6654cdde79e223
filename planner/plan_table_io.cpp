#include "planner/plan_table_io.hpp"

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
  out += R"(  "layout": {"dp": )" + std::to_string(l.dp) + R"(, "pp": )" + std::to_string(l.pp) +
         R"(, "microbatches": )" + std::to_string(l.microbatches) + R"(, "interleave": )" +
         std::to_string(l.interleave) + "},\n";
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
  const JsonView layout = view.at("layout");
  table.layout = {static_cast<std::int32_t>(layout.at("dp").as_int(1, kMaxDp)),
                  static_cast<std::int32_t>(layout.at("pp").as_int(1, kMaxPp)),
                  static_cast<std::int32_t>(layout.at("microbatches").as_int(1, kMaxMicrobatches)),
                  static_cast<std::int32_t>(layout.at("interleave").as_int(1, kMaxInterleave))};
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
