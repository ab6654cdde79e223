// recycle trace: generate, convert, map and summarize failure traces (docs/traces.md).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/parse.hpp"
#include "tools/command.hpp"
#include "tools/trace_source.hpp"
#include "traces/generator.hpp"
#include "traces/import.hpp"
#include "traces/mapping.hpp"
#include "traces/native_csv.hpp"
#include "traces/presets.hpp"
#include "traces/stats.hpp"
#include "traces/stats_report.hpp"

namespace recycle::tools {

namespace {

using namespace recycle::traces;

/// Flags are read as text and parsed by core/parse.hpp, so their errors read like every other.
struct GenArgs {
  std::string preset, nodes, days, rate, seed, tbf, repair, burst, causes, output;
};

struct ImportArgs {
  std::string format = "csv";
  std::string input;
  bool lenient = false;
  std::string nodes, days;
};

struct ConvertArgs {
  ImportArgs in;
  std::string output, map, cluster, seed = "0";
  bool seed_given = false;
};

struct StatsArgs {
  ImportArgs in;
  bool json = false;
};

std::int64_t node_count(const std::string& text, const std::string& flag) {
  const std::int64_t n = parse_int(text, flag);
  if (n < 1 || n > kMaxNodes) {
    throw InputError(flag,
                     "must be in [1, " + std::to_string(kMaxNodes) + "], got " + std::to_string(n));
  }
  return n;
}

GeneratorOptions generator_options(const GenArgs& a) {
  GeneratorOptions o;
  if (!a.preset.empty()) o = find_generator_preset(a.preset, "--preset").options;
  for (const auto& [value, flag] :
       {std::pair{&a.nodes, "--nodes"}, {&a.days, "--days"}, {&a.rate, "--rate"}}) {
    if (value->empty() && a.preset.empty())
      throw InputError(flag, "required (or start from a --preset)");
  }
  if (!a.nodes.empty()) o.nodes = parse_int(a.nodes, "--nodes");
  if (!a.days.empty()) o.days = read_days(a.days, "--days", kMaxDays, max_days_text());
  if (!a.rate.empty()) o.rate = parse_double(a.rate, "--rate");
  if (!a.tbf.empty()) o.tbf = TbfModel::parse(a.tbf, "--tbf");
  if (!a.repair.empty()) o.repair = RepairModel::parse(a.repair, "--repair");
  if (!a.burst.empty()) o.burst = BurstModel::parse(a.burst, "--burst");
  if (!a.causes.empty()) o.causes = CauseMix::parse(a.causes, "--causes");
  o.seed = seed_value(a.seed);
  validate(o);
  return o;
}

int run_gen(const GenArgs& args) {
  const GeneratorOptions options = generator_options(args);
  const Trace trace = generate_trace(options);
  write_native_csv(trace, args.output);
  const auto downs = std::count_if(trace.events().begin(), trace.events().end(),
                                   [](const Event& e) { return e.kind == EventKind::kDown; });
  log_written(fmt::format("wrote {}: {} failures on {} nodes over {} days ({} events)", args.output,
                          downs, trace.node_count(), options.days, trace.events().size()));
  return kExitOk;
}

LoadedTrace load(const ImportArgs& args) {
  ImportOptions options;
  options.lenient = args.lenient;
  if (!args.nodes.empty()) options.nodes = node_count(args.nodes, "--nodes");
  if (!args.days.empty()) {
    const double days = read_days(args.days, "--days", kMaxDays, max_days_text());
    options.duration = seconds_to_trace_time(days * kSecondsPerDay);
  }
  LoadedTrace loaded =
      import_trace(parse_import_format(args.format, "--from"), args.input, options);
  for (const std::string& note : loaded.notes) spdlog::info("{}: {}", args.input, note);
  if (loaded.repairs.total() > 0) {
    spdlog::warn(
        "{}: --lenient dropped {} up events of nodes that were not down and {} down events of "
        "nodes "
        "already down",
        args.input, loaded.repairs.up_without_down, loaded.repairs.repeated_down);
  }
  return loaded;
}

int run_convert(const ConvertArgs& args) {
  if (!args.map.empty() && args.cluster.empty())
    throw InputError("--cluster", "required with --map");
  if (args.map.empty() && !args.cluster.empty())
    throw InputError("--map", "required with --cluster");
  std::optional<MapOptions> mapping;
  if (!args.map.empty()) {
    mapping = MapOptions{parse_map_mode(args.map, "--map"), node_count(args.cluster, "--cluster"),
                         seed_value(args.seed)};
  }
  require_seed_draws(args.seed_given,
                     mapping ? std::optional<MapMode>(mapping->mode) : std::nullopt);
  LoadedTrace loaded = load(args.in);
  const Trace trace = mapping ? map_trace(loaded.trace, *mapping) : std::move(loaded.trace);
  write_native_csv(trace, args.output);
  log_written(fmt::format("wrote {}: {} events on {} nodes", args.output, trace.events().size(),
                          trace.node_count()));
  return kExitOk;
}

int run_stats(const StatsArgs& args) {
  const LoadedTrace loaded = load(args.in);
  const TraceStats stats = compute_stats(loaded.trace);
  const std::string report = args.json ? format_stats_json(stats, args.in.input, loaded.repairs)
                                       : format_stats_text(stats, args.in.input, loaded.repairs);
  std::fputs(report.c_str(), stdout);
  return kExitOk;
}

void add_import_flags(CLI::App* sub, ImportArgs& args) {
  sub->add_option("--from", args.format,
                  "Input format: csv (native, the default), infinitehbd, bamboo, simgrid");
  sub->add_option("input", args.input,
                  "Trace file (for simgrid: a profile file or a directory of them)")
      ->required();
  sub->add_flag(
      "--lenient", args.lenient,
      "Drop events that break the down/up alternation instead of failing, and say how many");
  sub->add_option("--nodes", args.nodes, "Nodes the trace was recorded on, if more than it names");
  sub->add_option(
      "--days", args.days,
      "Length of the observation, if longer than the last event (simgrid: where looping "
      "profiles are cut)");
}

}  // namespace

Command add_trace_command(CLI::App& app) {
  CLI::App* trace = app.add_subcommand(
      "trace", "Failure traces: generate, convert, map onto a cluster, summarize");
  trace->require_subcommand(1);
  trace->footer(examples(
      {"recycle trace gen --preset llama3-like --seed 1 -o llama3.csv",
       "recycle trace convert --from infinitehbd fault_trace.json --nodes 400 -o stepfun.csv",
       "recycle trace stats stepfun.csv"}));

  auto gen_args = std::make_shared<GenArgs>();
  CLI::App* gen =
      trace->add_subcommand("gen", "Generate a synthetic failure trace in the native CSV format");
  std::string preset_names;
  for (const GeneratorPreset& preset : generator_presets()) {
    preset_names += "\n  " + std::string(preset.name) + ": " + std::string(preset.summary);
  }
  gen->add_option("--preset", gen_args->preset,
                  "Start from a named preset; other flags override it:" + preset_names);
  gen->add_option("--nodes", gen_args->nodes, "Nodes in the cluster");
  gen->add_option("--days", gen_args->days, "Length of the trace in days");
  gen->add_option("--rate", gen_args->rate, "Failures per 1,000 node-days");
  gen->add_option("--seed", gen_args->seed, "Seed of the random draws (same seed, same file)")
      ->required();
  add_output(*gen, "-o,--output", gen_args->output, "Output file ('-': stdout)")->required();
  gen->add_option("--tbf", gen_args->tbf,
                  "Time between failure instants: exp or weibull:SHAPE (default exp)");
  gen->add_option("--repair", gen_args->repair,
                  "Repair time: fixed:HOURS, exp:MEAN_HOURS or lognormal:MU,SIGMA of ln hours "
                  "(default lognormal:2.71,2.53, fitted to the InfiniteHBD trace)");
  gen->add_option("--burst", gen_args->burst,
                  "P:K: with probability P a failure takes K other nodes down at the same instant "
                  "(default none)");
  gen->add_option("--causes", gen_args->causes,
                  "Cause mix: llama3, infinitehbd, none (default) or NAME:WEIGHT,...");
  gen->footer(examples(
      {"recycle trace gen --preset cloud-bad --seed 1 -o cloud-bad.csv",
       "recycle trace gen --nodes 4096 --days 30 --rate 5 --tbf weibull:0.7 --repair exp:12 "
       "--burst 0.05:3 --causes llama3 --seed 7 -o trace.csv"}));

  auto convert_args = std::make_shared<ConvertArgs>();
  CLI::App* convert = trace->add_subcommand("convert",
                                            "Convert a trace to the native CSV, checking it, "
                                            "optionally mapped onto a cluster of another size");
  add_import_flags(convert, convert_args->in);
  add_output(*convert, "-o,--output", convert_args->output, "Output file ('-': stdout)")
      ->required();
  convert->add_option(
      "--map", convert_args->map,
      "Replay on a cluster of --cluster nodes: wrap, sample or scale (docs/traces.md)");
  convert->add_option("--cluster", convert_args->cluster,
                      "Nodes of the cluster to map onto (with --map)");
  convert->add_option("--seed", convert_args->seed, "Seed for --map sample and scale (default 0)")
      ->each([convert_args](const std::string&) { convert_args->seed_given = true; });
  convert->footer(examples(
      {"recycle trace convert --from infinitehbd fault_trace.json --nodes 400 -o stepfun.csv",
       "recycle trace convert --from bamboo p3-trace.csv -o p3.csv",
       "recycle trace convert --from simgrid profiles/ --days 30 -o simgrid.csv",
       "recycle trace convert stepfun.csv --map scale --cluster 2048 --seed 1 -o "
       "stepfun-2048.csv"}));

  auto stats_args = std::make_shared<StatsArgs>();
  CLI::App* stats =
      trace->add_subcommand("stats", "Summarize a trace: rate, MTBF, repair times, bursts, causes");
  add_import_flags(stats, stats_args->in);
  stats->add_flag("--json", stats_args->json, "Print JSON instead of text");
  stats->footer(
      examples({"recycle trace stats traces/data/cloud-bad.csv",
                "recycle trace stats --from infinitehbd fault_trace.json --nodes 400 --json"}));

  return {trace, [=] {
            if (gen->parsed()) return run_gen(*gen_args);
            if (convert->parsed()) return run_convert(*convert_args);
            return run_stats(*stats_args);
          }};
}

}  // namespace recycle::tools
