// recycle study: a what-if grid of job variants replayed under the resilience policies, sharded
// for job arrays, and `recycle study merge` (sim/replay/study.hpp, docs/policies.md).
#include <optional>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/json.hpp"
#include "core/parse.hpp"
#include "sim/replay/study.hpp"
#include "tools/command.hpp"
#include "tools/trace_source.hpp"
#include "tools/whole_range.hpp"
#include "traces/import.hpp"
#include "traces/mapping.hpp"
#include "traces/presets.hpp"

namespace recycle::tools {

namespace {

struct StudyArgs {
  std::string job;
  std::vector<std::string> sweeps;
  std::string policy = "all";
  TraceSource trace;
  std::string preset;
  std::int64_t seeds = 1;
  std::string days;
  std::string step_table;
  std::string shard = "0/1";
  std::size_t threads = 0;
  std::string output = "-";
  std::vector<std::string> merge_inputs;
  std::string merge_output = "-";
};

int run_study(const StudyArgs& a) {
  if (a.job.empty()) throw InputError("--job", "required");
  if (a.trace.path.empty() == a.preset.empty()) {
    throw InputError("--trace", "give either --trace FILE or --trace-preset NAME");
  }
  sim::StudyOptions o;
  o.job = load_json(a.job);
  o.job_source = a.job;
  for (const std::string& s : a.sweeps) o.axes.push_back(sim::parse_sweep(s));
  o.policies = sim::parse_policies(a.policy, "--policy");
  o.shard = sim::parse_shard(a.shard);
  o.threads = a.threads;
  if (!a.days.empty()) {
    o.days = traces::read_days(a.days, "--days", traces::kMaxDays, traces::max_days_text());
  } else if (a.preset.empty()) {
    o.days = 0;  // the whole trace
  }
  if (!a.preset.empty()) {
    o.preset = traces::find_generator_preset(a.preset, "--trace-preset").name;
    if (a.seeds < 1 || a.seeds > 10'000) throw InputError("--seeds", "must be 1 to 10000");
    o.seeds = a.seeds;
  } else {
    o.trace = a.trace.load().trace;
    o.map = a.trace.mapping(0);  // each point's nodes are filled in per point
  }
  std::optional<sim::StepTable> table;
  if (!a.step_table.empty()) table = sim::StepTable::load(a.step_table);
  o.table = table ? &*table : nullptr;
  write_text_file(a.output, sim::run_study(o));
  return kExitOk;
}

int run_merge(const StudyArgs& a) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const std::string& path : a.merge_inputs) files.emplace_back(path, read_text_file(path));
  write_text_file(a.merge_output, sim::merge_study(files));
  return kExitOk;
}

}  // namespace

Command add_study_command(CLI::App& app) {
  auto a = std::make_shared<StudyArgs>();
  CLI::App* sub = app.add_subcommand(
      "study",
      "What-if grid: job variants replayed under the resilience policies, one CSV row "
      "per point, seed and policy (sharded for job arrays)");
  sub->add_option("--job", a->job, "Job JSON whose fields the sweeps vary");
  sub->add_option("--sweep", a->sweeps,
                  "KEY=V1,V2,... (a dotted job-file path, or rate/days/burst with --trace-preset); "
                  "K1/K2=A1/A2,... moves keys together; repeat for a grid")
      ->allow_extra_args(false);
  sub->add_option("--policy", a->policy, "Policies, a comma list or all (default)");
  a->trace.add_to(*sub, "Trace file every point replays",
                  "Replay the trace on each point's cluster: wrap, sample, scale");
  CLI::Option* preset =
      sub->add_option("--trace-preset", a->preset,
                      "Generate one trace per point and seed instead: llama3-like, cloud-bad, "
                      "infinitehbd-like");
  // What reads or maps a trace file does nothing to generated traces.
  for (const char* flag : {"--trace", "--from", "--map", "--seed"})
    preset->excludes(sub->get_option(flag));
  sub->add_option("--seeds", a->seeds, "Seeds per point with --trace-preset (default 1)")
      ->excludes(sub->get_option("--trace"));
  sub->add_option("--days", a->days, "Days to replay (default: 30 with a preset, the whole trace)");
  sub->add_option("--step-table", a->step_table, "Measured iteration times (docs/policies.md)");
  sub->add_option("--shard", a->shard, "Run every N-th point from I: I/N (default 0/1)");
  sub->add_option("--threads", a->threads,
                  "Threads (default: every core this process may use, its CPU affinity)")
      ->check(whole_range(1, 4096));
  add_output(*sub, "-o,--output", a->output, "Write the CSV to FILE instead of stdout");
  sub->footer(examples({
      "recycle study --job job.json --sweep cluster.spares=0,2,4,8 --trace-preset llama3-like "
      "--seeds 3 -o spares.csv",
      "recycle study --job job.json --sweep parallel.pp/parallel.dp=8/16,16/8 --sweep "
      "checkpoint.interval_s=1800,3600 --trace trace.csv --map scale -o split.csv",
      "recycle study --job job.json --sweep rate=2,4,8,16 --trace-preset llama3-like --shard 0/4 "
      "-o part0.csv",
      "recycle study merge part0.csv part1.csv part2.csv part3.csv -o study.csv",
  }));
  CLI::App* merge = sub->add_subcommand(
      "merge", "Join the CSVs of a sharded study into the file an unsharded run writes");
  merge->add_option("files", a->merge_inputs, "The shards' CSV files")->required();
  add_output(*merge, "-o,--output", a->merge_output, "Write to FILE instead of stdout");
  return {sub, [a, merge] { return merge->parsed() ? run_merge(*a) : run_study(*a); }};
}

}  // namespace recycle::tools
