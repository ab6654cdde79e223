// recycle plan: write a pipeline schedule, or check a schedule file.
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "planner/generators.hpp"
#include "planner/language/lower.hpp"
#include "planner/language/schedule_io.hpp"
#include "planner/language/text_timeline.hpp"
#include "planner/language/timing.hpp"
#include "planner/language/validator.hpp"
#include "planner/timing/cost_graph.hpp"
#include "planner/timing/period.hpp"
#include "tools/command.hpp"
#include "tools/layout_options.hpp"
#include "tools/schedule_request.hpp"

namespace recycle::tools {

namespace {

struct PlanOptions {
  LayoutOptions layout;
  ScheduleRequest request;
  bool comms = false;
  std::string format = "text";
  std::string output = "-";
  std::string check;
  PlacementOption placement;
  std::string torch_version = "2.15";
  bool torch_version_given = false;
};

int run_check(const PlanOptions& o) {
  const planner::Schedule schedule = planner::load_schedule(o.check, o.placement.placement());
  planner::ValidationOptions validation;
  validation.memory_limit = o.request.memory_limit;
  const auto violations = planner::validate(schedule, validation);
  if (violations.empty()) {
    std::printf(
        "%s: valid: %s schedule, dp %d x pp %d, %d micro-batches, interleave %d%s, %zu live "
        "workers\n",
        o.check.c_str(), schedule.generator.c_str(), schedule.layout.dp, schedule.layout.pp,
        schedule.layout.microbatches, schedule.layout.interleave,
        schedule.layout.placement == planner::Placement::kV ? " placed in a V" : "",
        schedule.workers.size());
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

int run_generate(const PlanOptions& o) {
  ScheduleRequest request = o.request;
  request.settle(o.layout.loaded_job());
  if (request.name.empty())
    throw InputError("--schedule", "required (or give --check FILE, or --job FILE)");
  request.cost_source = o.layout.cost_source();
  request.layout_source = o.layout.job;
  const RunModel on = o.layout.resolve(request.placed_by());
  const planner::Layout& layout = on.layout;
  const planner::CostModel& model = on.model;
  std::string why;
  const auto made = request.make(layout, model, o.layout.run_options(), why);
  if (!made) {
    std::printf("infeasible: %s\n", why.c_str());
    return kExitFailed;
  }
  const planner::Schedule& compute = *made;
  const planner::Schedule lowered =
      planner::lower(compute, model, o.layout.run_options().eager_sends);
  // What `recycle simulate` will report for it: the lowered schedule on the model's network.
  const auto steady = planner::steady_state(lowered, model, o.layout.run_options());
  RECYCLE_ASSERT(steady.has_value(), "a generated schedule deadlocked");
  // The costs simulate refuses, refused by the same rule.
  o.layout.require_time(steady->period);

  // Flags of one format, refused with another rather than ignored.
  if (o.comms && o.format != "json")
    throw InputError("--comms", "adds the communication to --format json; csv-comms has it");
  if (o.torch_version_given && o.format != "csv-comms")
    throw InputError("--torch-version", "sets the dialect of --format csv-comms");
  std::string text;
  if (o.format == "json") {
    text = planner::to_json(o.comms ? lowered : compute, &*steady);
  } else if (o.format == "csv") {
    text = planner::to_pytorch_csv(compute, planner::CsvFormat::kComputeOnly);
  } else if (o.format == "csv-comms") {
    text = planner::to_pytorch_csv(lowered, planner::CsvFormat::kComputeComms,
                                   *planner::parse_torch_version(o.torch_version));
  } else {
    const auto timeline = planner::compute_timeline(compute, model.compute);
    RECYCLE_ASSERT(timeline.has_value(), "a generated schedule deadlocked");
    text = planner::render_text_timeline(compute, *timeline);
    text +=
        fmt::format("steady state ({} optimizer, {}): iteration {:g} s, first iteration {:g} s\n",
                    planner::optimizer_name(compute),
                    model.cluster.free() ? "free network" : o.layout.network + " network",
                    to_seconds(steady->period), to_seconds(steady->makespan));
  }
  write_text_file(o.output, text);
  if (o.output != "-") log_written(fmt::format("wrote {} ({} schedule)", o.output, request.name));
  return kExitOk;
}

}  // namespace

Command add_plan_command(CLI::App& app) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* sub = app.add_subcommand("plan", "Write a pipeline schedule, or check a schedule file");
  o->request.add_to(*sub);
  o->layout.add_to(*sub);
  o->layout.add_network_to(*sub);
  sub->add_flag("--comms", o->comms, "JSON: include SEND/RECV, REDUCE_GRAD and OPT actions");
  sub->add_option("--format", o->format,
                  "Output: text (a timeline), json, csv (PyTorch compute_only), csv-comms")
      ->check(CLI::IsMember({"text", "json", "csv", "csv-comms"}));
  sub->add_option("--torch-version", o->torch_version,
                  "csv-comms: write the action tokens and rules of this torch.distributed."
                  "pipelining version (docs/formats.md)")
      ->check(CLI::IsMember(planner::torch_version_names()))
      ->capture_default_str()
      ->each([o](const std::string&) { o->torch_version_given = true; });
  o->placement.add_to(*sub);
  add_output(*sub, "-o,--output", o->output, "Write to FILE instead of stdout");
  CLI::Option* check =
      sub->add_option("--check", o->check,
                      "Validate a schedule file (JSON or PyTorch CSV): exit 0 if valid, 1 if not");
  sub->get_option("--placement")->needs(check);  // it says what a schedule file must be
  // --check reads a schedule and writes nothing: what makes or writes one is refused with it
  // rather than ignored (--schedule keeps a message of its own, below).
  for (CLI::Option* flag : sub->get_options()) {
    const std::string name = flag->get_name();
    if (flag != check && name != "--help" && name != "--schedule" && name != "--placement" &&
        name != "--memory-limit") {
      check->excludes(flag);
    }
  }
  sub->footer(examples({
      "recycle plan --schedule 1f1b --pp 4 --microbatches 8",
      "recycle plan --schedule zb-h1 --pp 4 --microbatches 8 --costs 1,1,1 --format json -o "
      "zb.json",
      "recycle plan --schedule interleaved --pp 4 --microbatches 8 --interleave 2 --format csv",
      "recycle plan --schedule zb-v --pp 4 --microbatches 8 --format csv-comms --torch-version 2.8",
      "recycle plan --schedule recycle --pp 8 --dp 8 --microbatches 8 --fail 3:2,5:6",
      "recycle plan --schedule recycle --base zb-v --pp 4 --dp 4 --microbatches 8 --fail 1:2",
      "recycle plan --schedule recycle --base 2bw --pp 4 --dp 4 --microbatches 8 --fail 1:2",
      "recycle plan --job job.json --format json -o plan.json",
      "recycle plan --check zb.json",
  }));
  return {sub, [o] {
            if (!o->check.empty()) {
              if (!o->request.name.empty()) {
                throw InputError("--check", "give either --check FILE or --schedule, not both");
              }
              return run_check(*o);
            }
            return run_generate(*o);
          }};
}

}  // namespace recycle::tools
