#include "tools/schedule_request.hpp"

#include <spdlog/spdlog.h>

#include "core/error.hpp"
#include "planner/exact_planner.hpp"
#include "planner/generators.hpp"
#include "planner/job_model.hpp"
#include "planner/language/failures.hpp"
#include "planner/language/semantics.hpp"
#include "planner/language/validator.hpp"
#include "planner/plan_table.hpp"
#include "planner/plan_table_io.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/memory.hpp"
#include "tools/layout_options.hpp"
#include "tools/whole_range.hpp"

namespace recycle::tools {

namespace {

/// A generated schedule that breaks the user's memory limit is the user's flag's problem.
void enforce_memory_limit(const planner::Schedule& schedule, std::optional<std::int32_t> limit) {
  if (!limit) return;
  const auto peaks = planner::peak_inflight_chunks(schedule);
  const std::int32_t chunks = schedule.layout.interleave;
  for (std::size_t w = 0; w < peaks.size(); ++w) {
    if (peaks[w] <= planner::chunk_limit(*limit, chunks)) continue;
    throw InputError("--memory-limit", schedule.generator + " holds " +
                                           fmt_microbatches(peaks[w], chunks) +
                                           " micro-batches of activations on worker " +
                                           planner::to_string(schedule.workers[w].id) +
                                           "; the limit is " + std::to_string(*limit));
  }
}

}  // namespace

planner::RecyclePlan ScheduleRequest::look_up(const planner::Layout& layout,
                                              const std::vector<planner::WorkerId>& failed,
                                              std::string& why) const {
  const planner::PlanTable table = planner::load_plan_table(plan_table);
  if (planner::canonical_schedule_name(placed_by()) != table.base) {
    throw InputError("--plan-table", plan_table + " was planned on the " + table.base +
                                         " base; give --base " + table.base);
  }
  if (!(table.layout == layout)) {
    throw InputError("--plan-table", plan_table + " was made for another layout (dp " +
                                         std::to_string(table.layout.dp) + " x pp " +
                                         std::to_string(table.layout.pp) + ", " +
                                         std::to_string(table.layout.microbatches) +
                                         " micro-batches)");
  }
  if (memory_limit && *memory_limit != table.memory_limit) {
    throw InputError("--memory-limit", plan_table + " was planned with a memory limit of " +
                                           std::to_string(table.memory_limit));
  }
  if (const std::int32_t dead = planner::dead_stage(failed, layout); dead >= 0) {
    planner::RecycleOptions options;
    options.layout = layout;
    options.base = placed_by();
    options.failed = failed;
    planner::RecyclePlan none =
        planner::plan_recycle(options);  // infeasible at once, with the reason
    why = none.reason;
    return none;
  }
  auto plan = planner::lookup(table, failed);
  if (!plan) {
    throw InputError("--plan-table",
                     plan_table + " holds no plan for these " + std::to_string(failed.size()) +
                         " failures (it covers up to " + std::to_string(table.max_failures) + ")");
  }
  if (plan->schedule.staggered_optimizer != staggered_optimizer()) {
    throw InputError(
        "--plan-table",
        plan_table + " was planned for the " +
            (plan->schedule.staggered_optimizer ? "staggered optimizer" : "optimizer barrier") +
            (staggered_optimizer() ? "; add --no-stagger" : "; drop --no-stagger"));
  }
  return *plan;
}

planner::RecyclePlan ScheduleRequest::solve_exact(const planner::Layout& layout,
                                                  const std::vector<planner::WorkerId>& failed,
                                                  const planner::CostModel& model,
                                                  std::string& why) const {
  const planner::Costs& costs = model.compute;
  planner::ExactOptions options;
  options.layout = layout;
  options.base = placed_by();
  options.failed = failed;
  options.costs = costs;
  // One limit for every stage: the tightest of what fits each (planner/timing/memory.hpp).
  const auto limits = planner::planning_limits(model, layout, memory_limit, layout.pp);
  options.memory_limit = *std::min_element(limits.begin(), limits.end());
  options.time_limit = time_limit_s;
  options.staggered_optimizer = staggered_optimizer();
  for (const auto& c : costs.virtual_stages) {
    if (c.forward <= 0 || c.backward_input <= 0 || c.backward_weight <= 0) {
      throw InputError(cost_source, "--exact needs every F, I and W to take some time");
    }
  }
  const planner::ExactResult r = planner::plan_exact(options);
  planner::RecyclePlan plan;
  plan.feasible = r.feasible;
  if (!r.feasible) {
    why = r.reason;
    return plan;
  }
  spdlog::info(
      "exact: makespan {:g} s (MILP {}; lower bound {:g} s), period {:g} s; heuristic makespan "
      "{:g} s, period {:g} s; {} binaries, {:.1f} s",
      to_seconds(r.makespan), r.optimal ? "optimal" : "time limit reached, best found",
      to_seconds(r.lower_bound), to_seconds(r.period), to_seconds(r.heuristic_makespan),
      to_seconds(r.heuristic_period), r.binaries, r.solve_seconds);
  plan.schedule = r.schedule;
  return plan;
}

CLI::Option* add_base_option(CLI::App& app, std::string& base) {
  std::string bases;
  for (const auto& n : planner::recycle_base_names()) bases += (bases.empty() ? "" : "|") + n;
  return app.add_option("--base", base,
                        "recycle: the fault-free schedule it plans on, " + bases +
                            " (default: a --job's own schedule when it is one of them, else "
                            "1f1b); give --interleave N for interleaved");
}

CLI::Option* ScheduleRequest::add_to(CLI::App& app) {
  std::string names;
  for (const auto& n : planner::fault_free_generator_names()) names += n + "|";
  auto* option = app.add_option(
      "--schedule", name,
      "Schedule generator: " + names + "recycle (pipedream-flush: PipeDream-2BW's name for 1f1b)");
  app.add_option(
      "--fail", fail,
      "Failed workers DP:STAGE[,DP:STAGE...]: recycle plans around them; 1f1b re-routes naively");
  app.add_option("--memory-limit", memory_limit,
                 "Most micro-batches of activations a worker may hold at once")
      ->check(whole_range(1, planner::kMaxMicrobatches));
  app.add_flag("--staggered-optimizer", staggered,
               "Each stage steps its optimizer when its own gradients are ready (no global "
               "barrier); generated schedules are planned for it");
  app.add_flag("--no-stagger", no_stagger,
               "recycle: keep the global optimizer barrier instead of staggering");
  add_base_option(app, base);
  app.add_option("--plan-table", plan_table,
                 "recycle: look the plan up in a table from `recycle plan-table`");
  CLI::Option* exact_flag = app.add_flag(
      "--exact", exact,
      "recycle: the optimal plan for these routes, a MILP solved with CBC (small layouts)");
  app.add_option("--time-limit", time_limit_s,
                 "--exact: seconds before the best plan so far is taken (default 60)")
      ->check(CLI::Range(0.0, 1e6))
      ->check(CLI::Validator(
          [](const std::string& text) {
            return text.find_first_not_of("0123456789.eE+-") == std::string::npos
                       ? std::string()
                       : "expected a number of seconds, got '" + text + "'";
          },
          "", "finite"))
      ->needs(exact_flag);
  return option;
}

void ScheduleRequest::settle(const profiles::Job* job) {
  if (job != nullptr && name.empty()) name = job->schedule;
  if (!base.empty() && name != "recycle")
    throw InputError("--base", "is the schedule recycle plans on; give --schedule recycle");
  if (job != nullptr && base.empty() && name == "recycle")
    base = planner::recycle_base_for(job->schedule);
}

std::string ScheduleRequest::placed_by() const {
  if (name != "recycle") return name;
  return base.empty() ? "1f1b" : base;
}

bool ScheduleRequest::staggered_optimizer() const {
  return name == "recycle" ? !no_stagger : staggered;
}

std::optional<planner::Schedule> ScheduleRequest::make(const planner::Layout& layout,
                                                       const planner::CostModel& model,
                                                       const planner::RunOptions& run,
                                                       std::string& why) const {
  try {
    return generate(layout, model, run, why);
  } catch (const InputError& e) {
    throw planner::as_job_field(e, layout_source, layout);
  }
}

std::optional<planner::Schedule> ScheduleRequest::generate(const planner::Layout& layout,
                                                           const planner::CostModel& model,
                                                           const planner::RunOptions& run,
                                                           std::string& why) const {
  const auto failed = planner::parse_failures(fail, layout);
  const bool recycle = name == "recycle";
  if (no_stagger && !recycle)
    throw InputError("--no-stagger", "only recycle staggers the optimizer by default");
  if (no_stagger && staggered)
    throw InputError("--no-stagger", "give either --no-stagger or --staggered-optimizer");
  if (exact && (!recycle || !plan_table.empty())) {
    throw InputError("--exact",
                     "solves recycle plans; give --schedule recycle and no --plan-table");
  }
  if (!plan_table.empty() && !recycle) {
    throw InputError("--plan-table", "holds recycle plans; give --schedule recycle");
  }
  if (!failed.empty() && !recycle && planner::canonical_schedule_name(name) != "1f1b") {
    throw InputError("--fail",
                     "only recycle (adaptive) and 1f1b (naive re-routing) plan around failures");
  }
  if (!recycle && failed.empty()) {
    planner::GeneratorOptions gen;
    gen.layout = layout;
    gen.model = model;
    gen.memory_limit = memory_limit;
    gen.staggered_optimizer = staggered_optimizer();
    gen.run = run;
    planner::Schedule schedule = planner::generate_fault_free(name, gen);
    enforce_memory_limit(schedule, memory_limit);
    planner::check_memory(schedule, model, cost_source);
    return schedule;
  }
  if (layout.interleave != 1 && !recycle) {
    throw InputError("--interleave", name +
                                         " with failures needs --interleave 1 (recycle plans on "
                                         "several chunks a worker: --base)");
  }
  planner::RecyclePlan plan;
  if (recycle && !plan_table.empty()) {
    plan = look_up(layout, failed, why);
    if (!plan.feasible) return std::nullopt;
  } else if (recycle && exact) {
    plan = solve_exact(layout, failed, model, why);
    if (!plan.feasible) return std::nullopt;
  } else if (recycle) {
    planner::RecycleOptions options;
    options.layout = layout;
    options.base = placed_by();
    options.failed = failed;
    options.model = model;
    options.memory_limit = memory_limit;
    options.staggered_optimizer = staggered_optimizer();
    options.run = run;
    plan = planner::plan_recycle(options);
  } else {
    plan = planner::plan_naive_reroute(layout, failed);
    enforce_memory_limit(plan.schedule, memory_limit);
  }
  if (!plan.feasible) {
    why = plan.reason;
    return std::nullopt;
  }
  plan.schedule.staggered_optimizer = staggered_optimizer();
  planner::check_memory(plan.schedule, model, cost_source);
  return plan.schedule;
}

}  // namespace recycle::tools
