// recycle plan-table: ReCycle plans for every canonical failure set up to a bound, precomputed so
// that a failure at run time costs a lookup (`--plan-table FILE` on plan and simulate).
#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "planner/plan_table.hpp"
#include "planner/plan_table_io.hpp"
#include "tools/command.hpp"
#include "tools/layout_options.hpp"
#include "tools/schedule_request.hpp"
#include "tools/whole_range.hpp"

namespace recycle::tools {

namespace {

struct PlanTableOptions {
  LayoutOptions layout;
  std::string base;  ///< the schedule ReCycle plans on; empty: the job's (recycle_base_for), 1f1b
  std::int32_t max_failures = 1;
  std::optional<std::int32_t> memory_limit;
  bool no_stagger = false;
  std::string output;
};

int run_plan_table(const PlanTableOptions& o) {
  if (o.output.empty()) throw InputError("--output", "required: the plan table file to write");
  planner::RecycleOptions base;
  const profiles::Job* job = o.layout.loaded_job();
  base.base = !o.base.empty()  ? o.base
              : job != nullptr ? planner::recycle_base_for(job->schedule)
                               : "1f1b";
  const RunModel on = o.layout.resolve(base.base);
  base.layout = on.layout;
  base.model = on.model;
  base.memory_limit = o.memory_limit;
  base.staggered_optimizer = !o.no_stagger;
  const planner::PlanTable table = planner::build_plan_table(base, o.max_failures);
  // The costs plan and simulate refuse, refused by the same rule: no plan's iteration takes time.
  Nanos longest = 0;
  for (const auto& [key, plan] : table.plans) longest = std::max(longest, plan.estimate.period);
  o.layout.require_time(longest);
  // What plan --plan-table reads: a table at the planning-work limit can pass its size.
  const std::string text = planner::to_json(table);
  require_readable_size(text, o.output);
  write_text_file(o.output, text);
  log_written(fmt::format(
      "wrote {}: {} plans, every failure set of up to {} workers that leaves each stage a live "
      "replica{}",
      o.output, table.plans.size(), table.max_failures,
      table.max_failures < o.max_failures ? " (no larger set leaves one)" : ""));
  return kExitOk;
}

}  // namespace

Command add_plan_table_command(CLI::App& app) {
  auto o = std::make_shared<PlanTableOptions>();
  CLI::App* sub = app.add_subcommand(
      "plan-table", "Precompute ReCycle plans for every failure set up to a bound");
  o->layout.add_to(*sub);
  add_base_option(*sub, o->base);
  sub->add_option("--max-failures", o->max_failures,
                  "Plan every failure set of up to K failed workers (default 1)")
      ->check(whole_range(0, 64));
  sub->add_option("--memory-limit", o->memory_limit,
                  "Most micro-batches of activations a worker may hold at once")
      ->check(whole_range(1, planner::kMaxMicrobatches));
  sub->add_flag("--no-stagger", o->no_stagger,
                "Plan for the global optimizer barrier instead of the staggered optimizer");
  add_output(*sub, "-o,--output", o->output, "The plan table file to write (JSON)");
  sub->footer(examples({
      "recycle plan-table --pp 4 --dp 4 --microbatches 8 --max-failures 2 -o table.json",
      "recycle plan --schedule recycle --pp 4 --dp 4 --microbatches 8 --fail 2:1 --plan-table "
      "table.json",
  }));
  return {sub, [o] { return run_plan_table(*o); }};
}

}  // namespace recycle::tools
