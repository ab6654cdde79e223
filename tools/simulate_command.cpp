// recycle simulate: run a schedule on a model of the cluster and report iteration time,
// throughput, bubbles, memory and the critical path (docs/simulator.md, docs/metrics.md).
#include <optional>
#include <string>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "planner/generators.hpp"
#include "planner/language/schedule_io.hpp"
#include "planner/language/validator.hpp"
#include "planner/language/work_limits.hpp"
#include "planner/timing/memory.hpp"
#include "sim/chrome_trace.hpp"
#include "sim/metrics.hpp"
#include "sim/report.hpp"
#include "sim/simulator.hpp"
#include "sim/svg_gantt.hpp"
#include "tools/command.hpp"
#include "tools/layout_options.hpp"
#include "tools/schedule_request.hpp"
#include "tools/whole_range.hpp"

namespace recycle::tools {

namespace {

constexpr std::int32_t kMaxIterations = 1000;

struct SimulateOptions {
  LayoutOptions layout;
  ScheduleRequest request;
  std::string schedule_file;
  PlacementOption placement;
  std::int32_t iterations = 4;
  std::int64_t microbatch_size = 1;
  bool no_fold = false;
  bool json = false;
  std::string output = "-";
  std::string chrome_trace;
  std::string svg;
  std::optional<std::int32_t> trace_iteration;
};

planner::Schedule load_checked(const std::string& path,
                               std::optional<planner::Placement> placement) {
  planner::Schedule schedule = planner::load_schedule(path, placement);
  const std::string problem = planner::summarize(planner::validate(schedule));
  if (problem.empty()) return schedule;
  throw InputError(path, problem + "; `recycle plan --check " + path + "` lists them");
}

int run_simulate(const SimulateOptions& o) {
  const profiles::Job* job = o.layout.loaded_job();
  ScheduleRequest request = o.request;
  request.settle(o.schedule_file.empty() ? job : nullptr);
  if (request.name.empty() && o.schedule_file.empty()) {
    throw InputError("--schedule",
                     "required: give --schedule NAME with --pp and --microbatches, "
                     "--schedule-file FILE, or --job FILE");
  }
  if (o.layout.costs.empty() && o.layout.profile.empty() && !job) {
    throw InputError("--costs",
                     "required: give --costs F,I,W (seconds; free network and optimizer), "
                     "--profile FILE or --job FILE");
  }
  request.cost_source = o.layout.cost_source();
  request.layout_source = o.layout.job;
  if (o.trace_iteration && o.chrome_trace.empty() && o.svg.empty()) {
    throw InputError("--trace-iteration",
                     "draws one iteration of --chrome-trace or --svg; give one of them");
  }
  if (o.trace_iteration && *o.trace_iteration > o.iterations) {
    throw InputError("--trace-iteration",
                     "expected 1 to " + std::to_string(o.iterations) + " (--iterations)");
  }

  // What the run will keep and draw, checked before any work.
  const auto require_fits = [&](const planner::Layout& layout) {
    planner::require_simulation(layout, o.iterations);
    const std::int32_t drawn = o.trace_iteration ? 1 : o.iterations;
    if (!o.chrome_trace.empty()) planner::require_traced(layout, drawn, "--chrome-trace");
    if (!o.svg.empty()) planner::require_traced(layout, drawn, "--svg");
  };
  planner::Schedule schedule;
  sim::SimOptions options;
  options.iterations = o.iterations;
  options.fold_pipelines = !o.no_fold;
  // The network --network names: the one --schedule plans for is the one the run is on.
  const planner::RunOptions network = o.layout.run_options();
  options.network = network.network;
  options.eager_sends = network.eager_sends;
  RunModel on;
  if (!o.schedule_file.empty()) {
    schedule = load_checked(o.schedule_file, o.placement.placement());
    require_fits(schedule.layout);
    options.source = o.schedule_file;
    on = o.layout.resolve(schedule.layout, o.schedule_file);
  } else {
    on = o.layout.resolve(request.placed_by());
    require_fits(on.layout);
    std::string why;
    auto made = request.make(on.layout, on.model, o.layout.run_options(), why);
    if (!made) {
      std::printf("infeasible: %s\n", why.c_str());
      return kExitFailed;
    }
    schedule = std::move(*made);
    options.source = "--schedule";
  }
  // The schedule says how its optimizer steps (recycle plans stagger); the flag forces staggering.
  options.staggered_optimizer = request.staggered || schedule.staggered_optimizer;
  planner::check_memory(schedule, on.model, o.layout.cost_source());

  const sim::SimRun run = sim::simulate(std::move(schedule), on.model, options);
  const sim::Metrics metrics =
      sim::compute_metrics(run, job ? job->parallel.microbatch_size : o.microbatch_size);
  o.layout.require_time(metrics.iteration_time);
  const profiles::Synthesis* synthesis = on.job ? &on.job->synthesis : nullptr;

  const std::optional<std::int32_t> only =
      o.trace_iteration ? std::optional<std::int32_t>(*o.trace_iteration - 1) : std::nullopt;
  if (!o.chrome_trace.empty()) write_text_file(o.chrome_trace, sim::chrome_trace(run, only));
  if (!o.svg.empty()) write_text_file(o.svg, sim::svg_gantt(run, metrics, only));
  const std::string report = o.json ? sim::report_json(run, metrics, synthesis).dump(2) + "\n"
                                    : sim::report_table(run, metrics, synthesis);
  write_text_file(o.output, report);
  return kExitOk;
}

}  // namespace

Command add_simulate_command(CLI::App& app) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* sub = app.add_subcommand("simulate",
                                     "Run a schedule on a model of the cluster: iteration time, "
                                     "throughput, bubbles, critical path");
  auto* schedule = o->request.add_to(*sub);
  o->layout.add_to(*sub);
  auto* file = sub->add_option(
      "--schedule-file", o->schedule_file,
      "Schedule file (JSON or PyTorch CSV), compute-only or lowered; its layout is used");
  file->excludes(schedule);
  o->placement.add_to(*sub);
  sub->get_option("--placement")->needs(file);
  for (const char* flag : {"--pp", "--microbatches", "--dp", "--interleave", "--memory-limit",
                           "--fail", "--no-stagger", "--plan-table", "--exact", "--time-limit"})
    file->excludes(sub->get_option(flag));
  sub->add_option("--iterations", o->iterations, "Consecutive iterations to simulate (default 4)")
      ->check(whole_range(1, kMaxIterations));
  sub->add_option("--microbatch-size", o->microbatch_size,
                  "Samples per micro-batch (default 1; a --job gives its own)")
      ->check(whole_range(1, std::int64_t{1} << 40))
      ->excludes(sub->get_option("--job"));
  o->layout.add_network_to(*sub);
  sub->add_flag(
      "--no-fold", o->no_fold,
      "Simulate every pipeline, also those identical to another (the same report, slower; "
      "docs/simulator.md, Performance)");
  sub->add_flag("--json", o->json, "Print the report as JSON (docs/metrics.md) instead of a table");
  add_output(*sub, "-o,--output", o->output, "Write the report to FILE instead of stdout");
  add_output(*sub, "--chrome-trace", o->chrome_trace,
             "Write the timeline as a Chrome trace (open in ui.perfetto.dev)");
  add_output(*sub, "--svg", o->svg, "Write the timeline as an SVG Gantt chart");
  sub->add_option("--trace-iteration", o->trace_iteration,
                  "Draw only iteration N (1-based) in --chrome-trace and --svg; default all")
      ->check(whole_range(1, kMaxIterations));
  sub->footer(examples({
      "recycle simulate --schedule 1f1b --pp 4 --microbatches 8 --costs 1,1,1",
      "recycle simulate --schedule zb-h1 --pp 4 --microbatches 8 --profile profile.json --json",
      "recycle simulate --schedule recycle --pp 8 --dp 8 --microbatches 8 --fail 3:2 --costs 1,1,1 "
      "--svg rc.svg",
      "recycle simulate --schedule-file plan.json --profile profile.json --svg plan.svg",
      "recycle simulate --job job.json --json",
      "recycle simulate --job job.json --schedule zb-h1",
      "recycle simulate --schedule 1f1b --pp 4 --microbatches 8 --costs 1,2,1 --chrome-trace "
      "t.json --trace-iteration 4",
  }));
  return {sub, [o] { return run_simulate(*o); }};
}

}  // namespace recycle::tools
