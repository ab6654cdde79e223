// recycle plan: write a pipeline schedule, or check a schedule file.
#include <optional>
#include <string>

#include <spdlog/spdlog.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/parse.hpp"
#include "planner/failures.hpp"
#include "planner/generators.hpp"
#include "planner/lower.hpp"
#include "planner/profile_costs.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/schedule_io.hpp"
#include "planner/text_timeline.hpp"
#include "planner/timing.hpp"
#include "planner/validator.hpp"
#include "profiles/profile.hpp"
#include "tools/command.hpp"
#include "tools/layout_options.hpp"

namespace recycle::tools {

namespace {

struct PlanOptions {
  LayoutOptions layout;
  std::string schedule;
  std::string fail;
  std::optional<std::int32_t> memory_limit;
  bool comms = false;
  std::string format = "text";
  std::string output = "-";
  std::string check;
};

int run_check(const PlanOptions& o) {
  const planner::Schedule schedule = planner::load_schedule(o.check);
  planner::ValidationOptions validation;
  validation.memory_limit = o.memory_limit;
  const auto violations = planner::validate(schedule, validation);
  if (violations.empty()) {
    std::printf("%s: valid: %s schedule, dp %d x pp %d, %d micro-batches, interleave %d, %zu live workers\n",
                o.check.c_str(), schedule.generator.c_str(), schedule.layout.dp, schedule.layout.pp,
                schedule.layout.microbatches, schedule.layout.interleave, schedule.workers.size());
    return kExitOk;
  }
  for (const auto& v : violations) {
    std::printf("%s: %s: %s\n", o.check.c_str(), std::string(planner::rule_name(v.rule)).c_str(),
                v.message.c_str());
  }
  std::printf("%s: invalid: %zu violation%s\n", o.check.c_str(), violations.size(),
              violations.size() == 1 ? "" : "s");
  return kExitFailed;
}

/// A generated schedule that breaks the user's memory limit is the user's flag's problem.
void enforce_memory_limit(const planner::Schedule& schedule, std::optional<std::int32_t> limit) {
  if (!limit) return;
  const auto peaks = planner::peak_inflight_chunks(schedule);
  for (std::size_t w = 0; w < peaks.size(); ++w) {
    const std::int32_t chunks = schedule.layout.interleave;
    if (peaks[w] > *limit * chunks) {
      throw InputError("--memory-limit",
                       schedule.generator + " holds " + fmt_microbatches(peaks[w], chunks) +
                           " micro-batches of activations on worker " + planner::to_string(schedule.workers[w].id) +
                           "; the limit is " + std::to_string(*limit));
    }
  }
}

/// The compute-only schedule the flags ask for; nullopt (after printing why) when infeasible.
std::optional<planner::Schedule> make_schedule(const PlanOptions& o, const planner::Layout& layout,
                                               const planner::Costs& costs) {
  const auto failed = planner::parse_failures(o.fail, layout);
  const bool recycle = o.schedule == "recycle";
  if (!failed.empty() && !recycle && o.schedule != "1f1b") {
    throw InputError("--fail", "only recycle (adaptive) and 1f1b (naive re-routing) plan around failures");
  }
  if (recycle || !failed.empty()) {
    if (layout.interleave != 1) throw InputError("--interleave", o.schedule + " with failures needs --interleave 1");
    planner::RecycleOptions options;
    options.layout = layout;
    options.failed = failed;
    options.costs = costs;
    options.memory_limit = o.memory_limit;
    const planner::RecyclePlan plan =
        recycle ? planner::plan_recycle(options) : planner::plan_naive_reroute(layout, failed);
    if (!plan.feasible) {
      std::printf("infeasible: %s\n", plan.reason.c_str());
      return std::nullopt;
    }
    return plan.schedule;
  }
  planner::GeneratorOptions gen;
  gen.layout = layout;
  gen.costs = costs;
  gen.memory_limit = o.memory_limit;
  return planner::generate_fault_free(o.schedule, gen);
}

int run_generate(const PlanOptions& o) {
  if (o.schedule.empty()) throw InputError("--schedule", "required (or give --check FILE)");
  const planner::Layout layout = o.layout.layout();
  const planner::Costs costs = o.layout.costs_for(layout);
  const auto made = make_schedule(o, layout, costs);
  if (!made) return kExitFailed;
  const planner::Schedule& compute = *made;
  enforce_memory_limit(compute, o.memory_limit);
  const planner::Schedule lowered = planner::lower(compute);

  std::string text;
  if (o.format == "json") {
    text = planner::to_json(o.comms ? lowered : compute);
  } else if (o.format == "csv") {
    text = planner::to_pytorch_csv(compute, planner::CsvFormat::kComputeOnly);
  } else if (o.format == "csv-comms") {
    text = planner::to_pytorch_csv(lowered, planner::CsvFormat::kComputeComms);
  } else {
    const auto timeline = planner::compute_timeline(compute, costs);
    RECYCLE_ASSERT(timeline.has_value(), "a generated schedule deadlocked");
    text = planner::render_text_timeline(compute, *timeline);
  }
  write_text_file(o.output, text);
  if (o.output != "-") spdlog::info("wrote {} ({} schedule)", o.output, o.schedule);
  return kExitOk;
}

}  // namespace

Command add_plan_command(CLI::App& app) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* sub = app.add_subcommand("plan", "Write a pipeline schedule, or check a schedule file");
  std::string names;
  for (const auto& n : planner::fault_free_generator_names()) names += (names.empty() ? "" : "|") + n;
  sub->add_option("--schedule", o->schedule, "Schedule generator: " + names + "|recycle");
  o->layout.add_to(*sub);
  sub->add_option("--fail", o->fail,
                  "Failed workers DP:STAGE[,DP:STAGE...]: recycle plans around them; 1f1b re-routes naively");
  sub->add_option("--memory-limit", o->memory_limit,
                  "Most micro-batches of activations a worker may hold at once")
      ->check(CLI::Range(1, planner::kMaxMicrobatches));
  sub->add_flag("--comms", o->comms, "JSON: include SEND/RECV, REDUCE_GRAD and OPT actions");
  sub->add_option("--format", o->format, "Output: text (a timeline), json, csv (PyTorch compute_only), csv-comms")
      ->check(CLI::IsMember({"text", "json", "csv", "csv-comms"}));
  sub->add_option("-o,--output", o->output, "Write to FILE instead of stdout");
  sub->add_option("--check", o->check, "Validate a schedule file (JSON or PyTorch CSV): exit 0 if valid, 1 if not");
  sub->footer(examples({
      "recycle plan --schedule 1f1b --pp 4 --microbatches 8",
      "recycle plan --schedule zb-h1 --pp 4 --microbatches 8 --costs 1,1,1 --format json -o zb.json",
      "recycle plan --schedule interleaved --pp 4 --microbatches 8 --interleave 2 --format csv",
      "recycle plan --schedule recycle --pp 8 --dp 8 --microbatches 8 --fail 3:2,5:6",
      "recycle plan --check zb.json",
  }));
  return {sub, [o] {
            if (!o->check.empty()) {
              if (!o->schedule.empty()) throw InputError("--check", "give either --check FILE or --schedule, not both");
              return run_check(*o);
            }
            return run_generate(*o);
          }};
}

}  // namespace recycle::tools
