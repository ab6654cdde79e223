// recycle replay: a job moved through a failure trace under the resilience policies
// (sim/replay/replay.hpp, docs/policies.md).
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/parse.hpp"
#include "planner/job_model.hpp"
#include "profiles/job.hpp"
#include "sim/replay/replay.hpp"
#include "sim/replay/replay_report.hpp"
#include "sim/replay/spares.hpp"
#include "sim/replay/step_table.hpp"
#include "tools/command.hpp"
#include "tools/progress_bar.hpp"
#include "tools/trace_source.hpp"
#include "traces/import.hpp"
#include "traces/mapping.hpp"

namespace recycle::tools {

namespace {

struct ReplayArgs {
  std::string job;
  std::string schedule;
  TraceSource trace;
  std::string policy = "all";
  std::string days;
  std::string step_table;
  bool json = false;
  bool match_spares = false;
  std::string timeline;
  std::string svg;
  std::string output = "-";
  bool quiet = false;
};

traces::Trace load_trace(const TraceSource& source, std::int64_t cluster_nodes) {
  traces::LoadedTrace loaded = source.load();
  if (const auto mapping = source.mapping(cluster_nodes)) {
    return traces::map_trace(loaded.trace, *mapping);
  }
  if (loaded.trace.node_count() != cluster_nodes) {
    throw InputError("--trace", fmt::format("{} watched {} nodes and the job's cluster has {}; "
                                            "--map wrap or --map scale says how to replay it",
                                            source.path, loaded.trace.node_count(), cluster_nodes));
  }
  return std::move(loaded.trace);
}

int run_replay(const ReplayArgs& a) {
  const std::vector<sim::PolicyKind> chosen = sim::parse_policies(a.policy, "--policy");
  const profiles::Job job = profiles::load_job(a.job);
  const planner::JobModel model = planner::job_model(job, a.schedule);
  planner::require_runnable(model);  // with the schedule the replay runs
  const traces::Trace trace = load_trace(a.trace, job.resilience.cluster.nodes);
  std::optional<sim::StepTable> table;
  if (!a.step_table.empty()) table = sim::StepTable::load(a.step_table);

  sim::ReplayOptions options;
  options.policies = chosen;
  options.table = table ? &*table : nullptr;
  if (!a.days.empty()) {
    // The bound exactly (shortest round trip): a rounded one could read above the value refused.
    const double trace_days = traces::to_days(trace.duration());
    const double days = traces::read_days(a.days, "--days", trace_days,
                                          fmt::format("the trace's {} days", trace_days));
    options.duration = traces::seconds_to_trace_time(days * traces::kSecondsPerDay);
  }
  ProgressBar bar("replay", !a.quiet);
  options.progress = [&bar](double done) { bar(done); };
  const sim::ReplayResult result = sim::replay(model, trace, options);
  std::optional<sim::SparesMatch> spares;
  if (a.match_spares) {
    const auto recycle = std::find_if(result.policies.begin(), result.policies.end(), [](auto& p) {
      return p.policy == sim::PolicyKind::kRecycle;
    });
    if (recycle == result.policies.end())
      throw InputError("--match-spares",
                       "matches recycle's goodput: --policy must include recycle");
    if (!recycle->unfit.empty())
      throw InputError("--match-spares", "recycle cannot run this job: " + recycle->unfit);
    // Spares fail too: the trace as it maps onto the larger cluster (without --map, the spares
    // past the nodes the trace watched never fail).
    const auto trace_for = [&](std::int64_t nodes) {
      return a.trace.mapping(nodes) ? load_trace(a.trace, nodes) : trace;
    };
    spares = sim::match_spares(model, trace_for, options, *recycle, job.resilience.job_nodes);
  }

  const std::string title =
      fmt::format("{} on {}", job.name.empty() ? a.job : job.name, a.trace.path);
  if (!a.timeline.empty()) write_text_file(a.timeline, sim::replay_timeline_csv(result));
  if (!a.svg.empty()) write_text_file(a.svg, sim::replay_svg(result, title));
  if (a.json) {
    nlohmann::ordered_json j = sim::replay_json(result);
    if (spares) j["spares_match"] = sim::spares_json(*spares);
    write_text_file(a.output, j.dump(2) + "\n");
  } else {
    write_text_file(a.output,
                    sim::replay_table(result, title) + (spares ? sim::spares_text(*spares) : ""));
  }
  return kExitOk;
}

}  // namespace

Command add_replay_command(CLI::App& app) {
  auto a = std::make_shared<ReplayArgs>();
  CLI::App* sub =
      app.add_subcommand("replay",
                         "Replay a job through a failure trace under resilience policies (samples, "
                         "goodput, time lost by cause, GPU-hours)");
  sub->add_option("--job", a->job, "Job JSON (model, hardware, parallel and resilience blocks)")
      ->required();
  sub->add_option("--schedule", a->schedule,
                  "Run the job on this schedule instead of its own: every policy's baseline "
                  "(1f1b, zb-h2, ...)");
  a->trace
      .add_to(*sub, "Failure trace (native CSV unless --from says otherwise)",
              "How the trace's nodes become the cluster's when the counts differ: wrap, "
              "sample or scale (docs/traces.md)")
      ->required();
  sub->add_option("--policy", a->policy,
                  "recycle, checkpoint, elastic, oobleck, bamboo, a comma list, or all (default)");
  sub->add_option("--days", a->days, "Replay only the first D days of the trace");
  sub->add_option("--step-table", a->step_table,
                  "CSV config,iteration_s of measured iteration times that override the simulated "
                  "ones (keys PxS or N nodes)");
  sub->add_flag("--json", a->json, "Print JSON instead of a table");
  sub->add_flag("--match-spares", a->match_spares,
                "Also replay checkpoint-restart with 1, 2, ... more spare nodes until its goodput "
                "matches recycle's, and compare GPU-hours per sample");
  add_output(*sub, "--timeline", a->timeline, "Write the throughput over time as CSV");
  add_output(*sub, "--svg", a->svg, "Write the throughput over time as an SVG line chart");
  add_output(*sub, "-o,--output", a->output, "Write the table or JSON to FILE instead of stdout");
  sub->add_flag("--quiet", a->quiet, "No progress bar");
  sub->footer(examples({
      "recycle replay --job job.json --trace traces/data/llama3-like.csv --map scale --days 30",
      "recycle replay --job job.json --trace trace.csv --policy recycle,checkpoint --json",
      "recycle replay --job job.json --trace trace.csv --map scale --schedule zb-h2",
      "recycle replay --job job.json --trace trace.csv --map scale --seed 1 --match-spares",
      "recycle replay --job job.json --trace p3-trace.csv --from bamboo --step-table steps.csv",
      "recycle replay --job job.json --trace trace.csv --timeline out/t.csv --svg out/t.svg",
  }));
  return {sub, [a] { return run_replay(*a); }};
}

}  // namespace recycle::tools
