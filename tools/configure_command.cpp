// recycle configure: how to run a model on a number of GPUs with a global batch, fastest without
// failures (planner/configure.hpp, docs/configure.md).
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/json.hpp"
#include "core/parse.hpp"
#include "planner/configure.hpp"
#include "planner/language/schedule.hpp"
#include "planner/timing/memory.hpp"
#include "profiles/job.hpp"
#include "profiles/shipped.hpp"
#include "sim/replay/configure_failures.hpp"
#include "tools/command.hpp"
#include "tools/progress_bar.hpp"
#include "tools/trace_source.hpp"
#include "traces/presets.hpp"

namespace recycle::tools {

namespace {

struct ConfigureArgs {
  std::string model;
  std::string hardware;
  std::optional<std::int64_t> gpus;
  std::optional<std::int64_t> nodes;
  std::int64_t global_batch = 0;
  std::optional<std::int64_t> sequence;
  std::string schedules;
  std::optional<std::int32_t> max_tp;
  std::string recompute = "none,selective,full";
  std::string sequence_parallel = "off,on";
  std::string distributed_optimizer = "off,on";  ///< of off, on, replica
  std::string dtype = "bf16";
  std::string attention = "flash";
  std::int32_t top = 10;
  bool json = false;
  bool csv = false;
  bool no_prune = false;
  bool quiet = false;
  std::string output = "-";
  std::string write_job;
  // Under failures.
  TraceSource trace;
  std::string preset;
  std::string rate;  ///< failures per 1,000 node-days of the generated traces
  std::int64_t seeds = 3;
  std::string days;
  std::string policy = "all";
  std::string spares = "0";
  std::string checkpoint_interval = "auto";
  std::int32_t candidates = 20;
  std::size_t threads = 0;
  std::vector<std::string> failure_flags_given;  ///< of those above, given without a trace
};

/// A spec named on the command line: a shipped name, else a file; its JSON as a job file holds it
/// (the name, or the file's object).
struct Named {
  nlohmann::json json;
};

std::vector<std::string> split_list(const std::string& text, const std::string& flag) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = text.find(',', at);
    const std::string item = text.substr(at, comma == std::string::npos ? comma : comma - at);
    if (item.empty()) throw InputError(flag, "expected a comma list with no empty item");
    if (std::find(out.begin(), out.end(), item) != out.end()) {
      throw InputError(flag, "\"" + shown(item) + "\" is listed twice");
    }
    out.push_back(item);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

bool is_shipped(const std::vector<profiles::ShippedSpec>& specs, const std::string& name) {
  return std::any_of(specs.begin(), specs.end(),
                     [&](const profiles::ShippedSpec& s) { return s.name == name; });
}

nlohmann::ordered_json row_json(const planner::Configuration& c) {
  nlohmann::ordered_json alike = nlohmann::ordered_json::array();
  for (const profiles::ParallelConfig& p : c.alike) alike.push_back(profiles::parallel_to_json(p));
  return {{"parallel", profiles::parallel_to_json(c.parallel)},
          {"distributed_optimizer", c.parallel.distributed_optimizer},
          {"lost_shard", c.parallel.shard_copies > 1 ? "replica" : "checkpoint"},
          {"schedule", c.schedule},
          {"microbatches", c.parallel.microbatches()},
          {"iteration_time_s", to_seconds(c.iteration)},
          {"lower_bound_s", to_seconds(c.lower_bound)},
          {"samples_per_s", c.samples_per_s},
          {"mfu", c.mfu},
          {"peak_memory_per_gpu_bytes", c.peak_per_gpu},
          {"headroom_per_gpu_bytes", c.memory_per_gpu - c.peak_per_gpu},
          {"alike", alike}};
}

/// The recomputation column: the row's, and "+sel" and the like for configurations folded into
/// it that differ only in theirs.
std::string recompute_text(const planner::Configuration& c) {
  std::string out = profiles::to_string(c.parallel.recompute);
  for (const profiles::ParallelConfig& p : c.alike) {
    if (p.recompute == c.parallel.recompute) continue;
    const std::string name =
        p.recompute == profiles::Recompute::kSelective ? "sel" : profiles::to_string(p.recompute);
    if (out.find(name) == std::string::npos) out += "+" + name;
  }
  return out;
}

/// The distributed optimizer column: no, yes (one copy of each shard), rep (with replicas).
const char* optimizer_text(const profiles::ParallelConfig& p) {
  return !p.distributed_optimizer ? "no" : p.shard_copies > 1 ? "rep" : "yes";
}

std::string gb(Bytes b) {
  return fmt::format("{:.1f}", static_cast<double>(b) / 1e9);
}

std::string table(const planner::ConfigureResult& r, const std::string& title) {
  std::string out = title + "\n";
  out += fmt::format(
      "{:>4} {:>3} {:>3} {:>5} {:>2} {:>4} {:>5} {:<9} {:<3} {:<4} {:<11} {:>10} "
      "{:>10} {:>6} {:>8} {:>8}\n",
      "rank", "tp", "pp", "dp", "v", "mbs", "m", "recompute", "sp", "dopt", "schedule", "iter s",
      "samples/s", "MFU %", "peak GB", "free GB");
  int rank = 0;
  for (const planner::Configuration& c : r.ranked) {
    const profiles::ParallelConfig& p = c.parallel;
    out += fmt::format(
        "{:>4} {:>3} {:>3} {:>5} {:>2} {:>4} {:>5} {:<9} {:<3} {:<4} {:<11} {:>10.4f} {:>10.3f} "
        "{:>6.1f} {:>8} {:>8}\n",
        ++rank, p.tp, p.pp, p.dp, p.interleave, p.microbatch_size, p.microbatches(),
        recompute_text(c), p.sequence_parallel ? "yes" : "no", optimizer_text(p), c.schedule,
        to_seconds(c.iteration), c.samples_per_s, 100 * c.mfu, gb(c.peak_per_gpu),
        gb(c.memory_per_gpu - c.peak_per_gpu));
  }
  out += fmt::format(
      "searched {} configurations: timed {}, folded {}, pruned {}{}\n", r.configurations, r.timed,
      r.folded, r.pruned,
      r.pruned > 0 ? fmt::format(" (their lower bound is above row {}'s time)", r.ranked.size())
                   : std::string());
  for (const planner::Refusal& f : r.refused) {
    out += fmt::format("refused {}: {}\n", f.count, f.reason);
  }
  if (std::any_of(r.ranked.begin(), r.ranked.end(),
                  [](const planner::Configuration& c) { return c.schedule == "2bw"; })) {
    out +=
        "note: 2bw trains on weights one step stale (PipeDream-2BW's update, not synchronous "
        "SGD); --schedules without it ranks synchronous schedules alone\n";
  }
  return out;
}

std::string csv(const planner::ConfigureResult& r) {
  std::string out =
      "rank,tp,pp,dp,interleave,microbatch_size,microbatches,recompute,sequence_parallel,"
      "distributed_optimizer,lost_shard,schedule,iteration_time_s,samples_per_s,mfu,"
      "peak_memory_per_gpu_bytes,headroom_per_gpu_bytes\n";
  int rank = 0;
  for (const planner::Configuration& c : r.ranked) {
    const profiles::ParallelConfig& p = c.parallel;
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{:.9f},{:.6f},{:.6f},{},{}\n", ++rank, p.tp, p.pp,
        p.dp, p.interleave, p.microbatch_size, p.microbatches(), profiles::to_string(p.recompute),
        p.sequence_parallel ? "true" : "false", p.distributed_optimizer ? "true" : "false",
        p.shard_copies > 1 ? "replica" : "checkpoint", c.schedule, to_seconds(c.iteration),
        c.samples_per_s, c.mfu, c.peak_per_gpu, c.memory_per_gpu - c.peak_per_gpu);
  }
  return out;
}

/// `text` as one CSV cell: in quotes, its quotes doubled.
std::string csv_quoted(const std::string& text) {
  std::string out = "\"";
  for (const char ch : text) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

/// The rows under failures as CSV: every configuration x policy x spares, best first; a policy
/// that cannot run a configuration has its reason in `unfit` and empty figures.
std::string failure_csv(const std::vector<planner::Configuration>& configs,
                        const std::vector<sim::FailureRow>& rows) {
  std::string out =
      "rank,fault_free_rank,tp,pp,dp,interleave,microbatch_size,recompute,sequence_parallel,"
      "distributed_optimizer,lost_shard,schedule,policy,spares,samples_per_s,"
      "samples_per_s_least,samples_per_s_most,goodput,samples_per_gpu_hour,unfit\n";
  int rank = 0;
  for (const sim::FailureRow& r : rows) {
    const planner::Configuration& c = configs[r.candidate];
    const profiles::ParallelConfig& p = c.parallel;
    const bool runs = r.unfit.empty();
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", ++rank, r.candidate + 1,
        p.tp, p.pp, p.dp, p.interleave, p.microbatch_size, recompute_text(c),
        p.sequence_parallel ? "true" : "false", p.distributed_optimizer ? "true" : "false",
        p.shard_copies > 1 ? "replica" : "checkpoint", c.schedule, sim::to_string(r.policy),
        r.spares, runs ? fmt::format("{:.6f}", r.samples_per_s) : "",
        runs ? fmt::format("{:.6f}", r.slowest) : "", runs ? fmt::format("{:.6f}", r.fastest) : "",
        runs ? fmt::format("{:.6f}", r.goodput) : "",
        runs ? fmt::format("{:.3f}", r.samples_per_gpu_hour) : "", runs ? "" : csv_quoted(r.unfit));
  }
  return out;
}

/// "tp 4, pp 16, dp 16, mbs 3, recompute none, sequence parallel, distributed optimizer, 2bw"
std::string summary(const planner::Configuration& c) {
  const profiles::ParallelConfig& p = c.parallel;
  return fmt::format("tp {}, pp {}, dp {}{}, mbs {}, recompute {}{}{}, {}", p.tp, p.pp, p.dp,
                     p.interleave > 1 ? fmt::format(", {} chunks", p.interleave) : "",
                     p.microbatch_size, profiles::to_string(p.recompute),
                     p.sequence_parallel ? ", sequence parallel" : "",
                     !p.distributed_optimizer ? ""
                     : p.shard_copies > 1     ? ", distributed optimizer with replicas"
                                              : ", distributed optimizer",
                     c.schedule);
}

std::string failure_table(const std::vector<planner::Configuration>& configs,
                          const std::vector<sim::FailureRow>& rows, std::size_t top,
                          const std::string& trace) {
  std::string out = fmt::format(
      "under failures ({}; every configuration on the same failures), by samples per second:\n",
      trace);
  out += fmt::format(
      "{:>4} {:>4} {:>3} {:>3} {:>5} {:>2} {:>4} {:<9} {:<3} {:<4} {:<11} {:<10} "
      "{:>6} {:>10} {:>21} {:>8} {:>14}\n",
      "rank", "ff", "tp", "pp", "dp", "v", "mbs", "recompute", "sp", "dopt", "schedule", "policy",
      "spares", "samples/s", "seeds' least-most", "goodput", "samples/GPU-h");
  std::size_t shown = 0;
  for (const sim::FailureRow& r : rows) {
    if (shown == top) break;
    const planner::Configuration& c = configs[r.candidate];
    const profiles::ParallelConfig& p = c.parallel;
    if (!r.unfit.empty()) continue;
    out += fmt::format(
        "{:>4} {:>4} {:>3} {:>3} {:>5} {:>2} {:>4} {:<9} {:<3} {:<4} {:<11} {:<10} "
        "{:>6} {:>10.3f} {:>10.3f}-{:<10.3f} {:>8.4f} {:>14.1f}\n",
        ++shown, r.candidate + 1, p.tp, p.pp, p.dp, p.interleave, p.microbatch_size,
        recompute_text(c), p.sequence_parallel ? "yes" : "no", optimizer_text(p), c.schedule,
        sim::to_string(r.policy), r.spares, r.samples_per_s, r.slowest, r.fastest, r.goodput,
        r.samples_per_gpu_hour);
  }
  // Whether the best under failures is the fault-free best, and if not what it saves.
  const auto best = std::find_if(rows.begin(), rows.end(),
                                 [](const sim::FailureRow& r) { return r.unfit.empty(); });
  if (best == rows.end()) return out + "no configuration could run under any policy given\n";
  if (best->candidate == 0) {
    return out + fmt::format(
                     "the fault-free best ({}) is also the best under failures, with {} "
                     "and {} spares\n",
                     summary(configs[0]), sim::to_string(best->policy), best->spares);
  }
  const auto same = std::find_if(rows.begin(), rows.end(), [&](const sim::FailureRow& r) {
    return r.candidate == 0 && r.policy == best->policy && r.spares == best->spares;
  });
  out += fmt::format(
      "the best under failures is the fault-free rank {} ({}), not the fault-free "
      "best ({})",
      best->candidate + 1, summary(configs[best->candidate]), summary(configs[0]));
  if (same != rows.end() && same->unfit.empty()) {
    std::size_t cause = 0;
    double saved = -1;
    for (std::size_t c = 0; c < sim::kLostCauses; ++c) {
      const double d = same->lost_s[c] - best->lost_s[c];
      if (d > saved) {
        saved = d;
        cause = c;
      }
    }
    out += fmt::format(
        ": under {} with {} spares it trains {:.3f} samples/s against {:.3f}, and "
        "loses {:.1f} hours less to {}",
        sim::to_string(best->policy), best->spares, best->samples_per_s, same->samples_per_s,
        saved / 3600, sim::to_string(static_cast<sim::LostCause>(cause)));
    const auto& a = configs[best->candidate].parallel;
    const auto& b = configs[0].parallel;
    const auto redo_or_restart = static_cast<sim::LostCause>(cause) == sim::LostCause::kRedo ||
                                 static_cast<sim::LostCause>(cause) == sim::LostCause::kRestart;
    if (redo_or_restart && b.distributed_optimizer && b.shard_copies == 1 &&
        (!a.distributed_optimizer || a.shard_copies > 1)) {
      out +=
          " (the fault-free best shards its optimizer state with one copy, so every failure "
          "loses a shard and rolls back to the checkpoint; this one keeps a copy of every "
          "shard's state on a live rank, docs/policies.md)";
    }
    if (a.dp > b.dp) {
      out += fmt::format(
          " (dp {} against {}: more data-parallel peers per stage share a failed "
          "worker's work)",
          a.dp, b.dp);
    }
  }
  return out + "\n";
}

/// Nothing ranked: one error saying why, and what would fit.
[[noreturn]] void nothing_fits(const planner::ConfigureResult& r, const ConfigureArgs& a,
                               const planner::ConfigureSpace& space) {
  const std::int64_t gpus = space.gpus;
  std::string why;
  for (const planner::Refusal& f : r.refused)
    why += fmt::format("{}{} {}", why.empty() ? "" : "; ", f.count, f.reason);
  if (r.least_shortfall_per_gpu > 0) {
    // Weights and gradients alone, 2 x 16-bit a parameter with the optimizer state sharded
    // away, need at least this many GPUs.
    const double bytes = 4.0 * static_cast<double>(space.model.parameters());
    const auto least =
        static_cast<std::int64_t>(std::ceil(bytes / static_cast<double>(space.gpu.memory_bytes)));
    throw InputError(a.gpus ? "--gpus" : "--nodes",
                     fmt::format("no configuration of {} GPUs fits: the closest is {} short per "
                                 "GPU; its weights and gradients alone need at least {} GPUs of "
                                 "{} ({})",
                                 gpus, planner::format_gb(r.least_shortfall_per_gpu), least,
                                 planner::format_gb(space.gpu.memory_bytes), why));
  }
  if (r.dp_choices.empty()) {
    throw InputError(a.gpus ? "--gpus" : "--nodes",
                     fmt::format("no tp x pp x dp split of {} GPUs suits {} (tp dividing its "
                                 "heads and at most a node's GPUs, pp at most its {} layers): {}",
                                 gpus, space.model.name, space.model.layers, why));
  }
  std::string dps;
  for (std::size_t i = 0; i < r.dp_choices.size(); ++i) {
    dps += fmt::format("{}{}",
                       i == 0                         ? ""
                       : i + 1 == r.dp_choices.size() ? " or "
                                                      : ", ",
                       r.dp_choices[i]);
  }
  const auto refused_for = [&](std::string_view what) {
    return std::any_of(r.refused.begin(), r.refused.end(), [&](const planner::Refusal& f) {
      return f.reason.find(what) != std::string::npos;
    });
  };
  if (std::all_of(r.refused.begin(), r.refused.end(), [](const planner::Refusal& f) {
        return f.reason.starts_with("too large") || f.reason.starts_with("more virtual stages");
      })) {
    throw InputError(a.sequence ? "--sequence" : "--model",
                     fmt::format("no configuration of {} on {} GPUs can be timed: {}; a shorter "
                                 "sequence or a smaller model would",
                                 space.model.name, gpus, why));
  }
  if (refused_for("dp does not divide")) {
    throw InputError("--global-batch",
                     fmt::format("no configuration of {} GPUs runs a global batch of {} ({}): its "
                                 "splits have dp {}; a batch that one of them divides would",
                                 gpus, a.global_batch, why, dps));
  }
  if (refused_for("micro-batches a pipeline")) {
    const std::int64_t most_dp = std::min<std::int64_t>(r.dp_choices.back(), planner::kMaxDp);
    throw InputError(
        "--global-batch",
        fmt::format("no configuration of {} GPUs runs a global batch of {} ({}): at "
                    "most {} samples would (65,536 micro-batches of {} on dp {})",
                    gpus, a.global_batch, why,
                    std::int64_t{planner::kMaxMicrobatches} * space.max_microbatch_size * most_dp,
                    space.max_microbatch_size, most_dp));
  }
  throw InputError("--global-batch", fmt::format("no configuration of {} GPUs runs a global "
                                                 "batch of {}: {}",
                                                 gpus, a.global_batch, why));
}

int run_configure(ConfigureArgs a) {
  if (a.json && a.csv) throw InputError("--csv", "give either --json or --csv");
  planner::ConfigureSpace space;
  Named model;
  Named hardware;
  if (is_shipped(profiles::shipped_models(), a.model) || !std::filesystem::exists(a.model)) {
    space.model = profiles::shipped_model(a.model, "--model");
    model.json = a.model;
  } else {
    model.json = load_json(a.model);
    space.model = profiles::model_from_json(model.json, a.model);
  }
  if (is_shipped(profiles::shipped_hardware(), a.hardware) ||
      !std::filesystem::exists(a.hardware)) {
    space.gpu = profiles::shipped_gpu(a.hardware, "--hardware");
    hardware.json = a.hardware;
  } else {
    hardware.json = load_json(a.hardware);
    space.gpu = profiles::gpu_from_json(hardware.json, a.hardware);
  }
  if (a.sequence) {
    space.model.sequence_length = *a.sequence;
    if (model.json.is_string()) {
      for (const auto& s : profiles::shipped_models()) {
        if (s.name == a.model) model.json = nlohmann::json::parse(s.json);
      }
    }
    model.json["sequence_length"] = *a.sequence;
  }
  space.gpus = a.gpus ? *a.gpus : *a.nodes * space.gpu.gpus_per_node;
  space.global_batch = a.global_batch;
  if (!a.schedules.empty()) space.schedules = split_list(a.schedules, "--schedules");
  if (a.max_tp) space.max_tp = *a.max_tp;
  space.recompute.clear();
  for (const std::string& r : split_list(a.recompute, "--recompute")) {
    // The names job files use (profiles::to_string), one definition.
    bool known = false;
    for (const profiles::Recompute mode :
         {profiles::Recompute::kNone, profiles::Recompute::kSelective,
          profiles::Recompute::kFull}) {
      if (r == profiles::to_string(mode)) {
        space.recompute.push_back(mode);
        known = true;
      }
    }
    if (!known) {
      throw InputError("--recompute", "expected none, selective or full, got \"" + shown(r) + "\"");
    }
  }
  const auto switches = [](const std::string& text, const std::string& flag) {
    std::vector<bool> out;
    for (const std::string& v : split_list(text, flag)) {
      if (v != "off" && v != "on") {
        throw InputError(flag, "expected a comma list of off and on, got \"" + shown(v) + "\"");
      }
      out.push_back(v == "on");
    }
    return out;
  };
  space.sequence_parallel = switches(a.sequence_parallel, "--sequence-parallel");
  space.optimizer.clear();
  for (const std::string& v : split_list(a.distributed_optimizer, "--distributed-optimizer")) {
    using O = planner::ConfigureSpace::Optimizer;
    if (v == "off")
      space.optimizer.push_back(O::kReplicated);
    else if (v == "on")
      space.optimizer.push_back(O::kSharded);
    else if (v == "replica")
      space.optimizer.push_back(O::kShardedReplica);
    else
      throw InputError("--distributed-optimizer",
                       "expected a comma list of off, on and replica, got \"" + shown(v) + "\"");
  }
  bool typed = false;
  for (const profiles::DType type : {profiles::DType::kBf16, profiles::DType::kFp16,
                                     profiles::DType::kTf32, profiles::DType::kFp32}) {
    if (a.dtype == profiles::to_string(type)) {  // the names job files use
      space.dtype = type;
      typed = true;
    }
  }
  if (!typed) {
    throw InputError("--dtype",
                     "expected bf16, fp16, tf32 or fp32, got \"" + shown(a.dtype) + "\"");
  }
  if (a.attention != "flash" && a.attention != "standard") {
    throw InputError("--attention",
                     "expected flash or standard, got \"" + shown(a.attention) + "\"");
  }
  space.flash_attention = a.attention == "flash";
  if (!a.trace.path.empty() && !a.preset.empty()) {
    throw InputError("--trace", "give either --trace FILE or --trace-preset NAME");
  }
  if (!a.trace.path.empty() && !a.rate.empty()) {
    throw InputError("--rate",
                     "sets the rate of generated traces: give either --trace FILE or "
                     "--rate (with or without --trace-preset)");
  }
  // --rate alone generates the llama3-like shape (its causes and repair times) at that rate.
  if (!a.rate.empty() && a.preset.empty()) a.preset = "llama3-like";
  const bool failures = !a.trace.path.empty() || !a.preset.empty();
  sim::FailureSpace fs;
  if (failures) {
    fs.model = model.json;
    fs.hardware = hardware.json;
    fs.policies = sim::parse_policies(a.policy, "--policy");
    fs.spares.clear();
    for (const std::string& v : split_list(a.spares, "--spares")) {
      const std::int64_t n = parse_int(v, "--spares");
      if (n < 0 || n > 100'000) throw InputError("--spares", "expected 0 to 100000 spare nodes");
      fs.spares.push_back(n);
    }
    if (a.checkpoint_interval != "auto") {
      fs.checkpoint_interval = parse_double(a.checkpoint_interval, "--checkpoint-interval");
      if (!(*fs.checkpoint_interval > 0) || *fs.checkpoint_interval > 1e9) {
        throw InputError("--checkpoint-interval", "expected auto or seconds in (0, 1e9]");
      }
    }
    fs.threads = a.threads;
    if (!a.preset.empty()) {
      fs.preset = traces::find_generator_preset(a.preset, "--trace-preset").name;
      if (!a.rate.empty()) {
        fs.rate = parse_double(a.rate, "--rate");
        if (!(*fs.rate > 0) || *fs.rate > 1e6) {
          throw InputError("--rate", "expected failures per 1,000 node-days in (0, 1e6], got '" +
                                         shown(a.rate) + "'");
        }
      }
      if (a.seeds < 1 || a.seeds > 1000) throw InputError("--seeds", "must be 1 to 1000");
      fs.seeds = a.seeds;
      fs.days = a.days.empty() ? 30
                               : traces::read_days(a.days, "--days", traces::kMaxDays,
                                                   traces::max_days_text());
    } else {
      fs.trace = a.trace.load().trace;
      fs.map = a.trace.mapping(0);  // each configuration's nodes are filled in
      fs.days = a.days.empty() ? 0
                               : traces::read_days(a.days, "--days", traces::kMaxDays,
                                                   traces::max_days_text());
    }
  } else {
    if (!a.failure_flags_given.empty()) {
      throw InputError(a.failure_flags_given.front(),
                       "ranks under failures: give --trace FILE or --trace-preset NAME with it");
    }
  }
  space.top = failures ? std::max(a.top, a.candidates) : a.top;
  space.prune = !a.no_prune;
  ProgressBar bar("configure", !a.quiet);
  space.progress = [&bar](double done) { bar(done); };
  const planner::ConfigureResult result = planner::configure(space);
  if (result.ranked.empty()) nothing_fits(result, a, space);
  std::vector<sim::FailureRow> under;
  std::vector<planner::Configuration> candidates;
  std::string trace_name;
  if (failures) {
    candidates.assign(result.ranked.begin(),
                      result.ranked.begin() +
                          std::min<std::ptrdiff_t>(
                              a.candidates, static_cast<std::ptrdiff_t>(result.ranked.size())));
    ProgressBar replays("configure: replays", !a.quiet);
    fs.progress = [&replays](double done) { replays(done); };
    under = sim::rank_under_failures(candidates, fs);
    trace_name =
        a.preset.empty() ? a.trace.path
        : fs.rate        ? fmt::format(
                               "{} preset at {:g} failures per 1,000 node-days, "
                                      "{} seeds of {:g} days",
                               fs.preset, *fs.rate, fs.seeds, fs.days)
                  : fmt::format("{} preset, {} seeds of {:g} days", fs.preset, fs.seeds, fs.days);
  }

  const auto first_run = std::find_if(under.begin(), under.end(),
                                      [](const sim::FailureRow& r) { return r.unfit.empty(); });
  if (!a.write_job.empty() && first_run != under.end()) {
    nlohmann::ordered_json job =
        sim::configuration_job(candidates[first_run->candidate], fs, first_run->spares);
    job["name"] =
        fmt::format("{} on {} {} (recycle configure's best under failures, {})", space.model.name,
                    space.gpus, space.gpu.name, sim::to_string(first_run->policy));
    write_text_file(a.write_job, job.dump(1) + "\n");
  } else if (!a.write_job.empty()) {
    const planner::Configuration& best = result.ranked.front();
    nlohmann::ordered_json job =
        profiles::job_to_json(model.json, hardware.json, best.parallel, best.schedule);
    job["name"] = fmt::format("{} on {} {} (recycle configure's best)", space.model.name,
                              space.gpus, space.gpu.name);
    write_text_file(a.write_job, job.dump(1) + "\n");
  }
  const std::string title = fmt::format("{} on {} x {}, global batch {}", space.model.name,
                                        space.gpus, space.gpu.name, space.global_batch);
  if (a.json) {
    nlohmann::ordered_json j = {{"format", "recycle.configure/1"},
                                {"model", space.model.name},
                                {"hardware", space.gpu.name},
                                {"gpus", space.gpus},
                                {"global_batch", space.global_batch},
                                {"configurations", result.configurations},
                                {"timed", result.timed},
                                {"folded", result.folded},
                                {"pruned", result.pruned}};
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& c : result.ranked) rows.push_back(row_json(c));
    j["ranked"] = std::move(rows);
    nlohmann::ordered_json refused = nlohmann::ordered_json::array();
    for (const auto& f : result.refused)
      refused.push_back({{"reason", f.reason}, {"count", f.count}});
    j["refused"] = std::move(refused);
    if (failures) {
      nlohmann::ordered_json rows = nlohmann::ordered_json::array();
      for (const sim::FailureRow& r : under) {
        nlohmann::ordered_json row = {{"fault_free_rank", r.candidate + 1},
                                      {"policy", sim::to_string(r.policy)},
                                      {"spares", r.spares}};
        if (!r.unfit.empty()) {
          row["unfit"] = r.unfit;
        } else {
          row["samples_per_s"] = r.samples_per_s;
          row["samples_per_s_least"] = r.slowest;
          row["samples_per_s_most"] = r.fastest;
          row["goodput"] = r.goodput;
          row["samples_per_gpu_hour"] = r.samples_per_gpu_hour;
        }
        rows.push_back(std::move(row));
      }
      j["under_failures"] = {{"trace", trace_name}, {"rows", std::move(rows)}};
    }
    write_text_file(a.output, j.dump(2) + "\n");
  } else if (a.csv) {
    write_text_file(a.output, failures ? failure_csv(candidates, under) : csv(result));
  } else {
    std::string text = table(result, title);
    if (failures) {
      text += failure_table(candidates, under, static_cast<std::size_t>(a.top), trace_name);
    }
    write_text_file(a.output, text);
  }
  return kExitOk;
}

}  // namespace

Command add_configure_command(CLI::App& app) {
  auto a = std::make_shared<ConfigureArgs>();
  CLI::App* sub = app.add_subcommand(
      "configure",
      "Rank the ways to run a model on a number of GPUs with a global batch, fastest first "
      "(tp, pp, dp, interleave, micro-batch size, recompute, sequence parallel, distributed "
      "optimizer, schedule)");
  sub->add_option("--model", a->model,
                  "A shipped model's name (gpt3-175b, llama3-70b, ...) or a "
                  "model JSON file")
      ->required();
  sub->add_option("--hardware", a->hardware,
                  "A shipped GPU's name (a100-80g, h100-80g, ...) or a GPU JSON file")
      ->required();
  auto* gpus = sub->add_option("--gpus", a->gpus, "GPUs to run on")->check(CLI::Range(1, 1 << 22));
  auto* nodes =
      sub->add_option("--nodes", a->nodes, "Nodes to run on (x the hardware's GPUs per node)")
          ->check(CLI::Range(1, 1 << 20));
  gpus->excludes(nodes);
  sub->add_option("--global-batch", a->global_batch, "Samples per iteration")
      ->required()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  sub->add_option("--sequence", a->sequence, "Sequence length (default: the model's)")
      ->check(CLI::Range(1, 1 << 24));
  sub->add_option("--schedules", a->schedules,
                  "Comma list of schedules to try (default: 1f1b, interleaved, zb-h1, zb-h2, "
                  "zb-v, dualpipe-v, 2bw)");
  sub->add_option("--max-tp", a->max_tp, "Most tensor parallelism (default: the GPUs of a node)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--recompute", a->recompute,
                  "Comma list of none, selective, full (default: all three)");
  sub->add_option("--sequence-parallel", a->sequence_parallel,
                  "off, on, or off,on (default: both, where tp > 1)");
  sub->add_option("--distributed-optimizer", a->distributed_optimizer,
                  "Comma list of off, on (one copy of each shard) and replica (a copy on the next "
                  "rank), tried where dp > 1 (default: off,on)");
  sub->add_option("--dtype", a->dtype, "bf16 (default), fp16, tf32 or fp32");
  sub->add_option("--attention", a->attention, "flash (default) or standard");
  sub->add_option("--top", a->top, "Rows to rank (default 10)")->check(CLI::Range(1, 10000));
  sub->add_flag("--json", a->json, "Print JSON instead of a table");
  sub->add_flag("--csv", a->csv, "Print CSV instead of a table");
  sub->add_flag("--no-prune", a->no_prune,
                "Time every configuration (slow; the ranking is the same, docs/configure.md)");
  sub->add_flag("--quiet", a->quiet, "No progress bar");
  a->trace.add_to(*sub,
                  "Rank under the failures of this trace (native CSV unless --from says otherwise)",
                  "How the trace's nodes become each configuration's cluster: wrap, sample or "
                  "scale (docs/traces.md)");
  sub->add_option("--trace-preset", a->preset,
                  "Rank under failures of generated traces: llama3-like, cloud-bad, ... (trace gen "
                  "--preset)");
  sub->add_option("--rate", a->rate,
                  "Failures per 1,000 node-days of the generated traces: the --trace-preset's "
                  "shape at this rate (llama3-like without one)");
  auto* seeds = sub->add_option("--seeds", a->seeds,
                                "Traces per configuration with --trace-preset, seeds 1..N "
                                "(default 3)");
  sub->add_option("--days", a->days, "Days of failures replayed (default 30 with a preset)");
  auto* policy = sub->add_option("--policy", a->policy,
                                 "Policies replayed: recycle, checkpoint, elastic, oobleck, "
                                 "bamboo, adaptive, a comma list, or all (default)");
  auto* spares = sub->add_option("--spares", a->spares,
                                 "Comma list of spare node counts replayed (default 0)");
  auto* interval = sub->add_option("--checkpoint-interval", a->checkpoint_interval,
                                   "auto (default: the replay's, from the failure rate) or "
                                   "seconds of training");
  auto* candidates = sub->add_option("--candidates", a->candidates,
                                     "Fastest fault-free configurations replayed (default 20)")
                         ->check(CLI::Range(1, 1000));
  sub->add_option("--threads", a->threads, "Replays at once (default: every core)");
  add_output(*sub, "-o,--output", a->output, "Write the table, JSON or CSV to FILE");
  add_output(*sub, "--write-job", a->write_job,
             "Write the fastest configuration as a job file (`recycle simulate --job` times it "
             "alike)");
  sub->footer(examples({
      "recycle configure --model gpt3-175b --hardware a100-80g --gpus 1024 --global-batch 1536",
      "recycle configure --model llama3-70b --hardware h100-80g --nodes 256 --global-batch 1024 "
      "--top 5 --write-job best.json",
      "recycle configure --model gpt3-13b --hardware a100-80g --gpus 64 --global-batch 512 "
      "--schedules 1f1b,zb-h2 --recompute selective --csv -o ranked.csv",
      "recycle configure --model gpt3-175b --hardware a100-80g --gpus 1024 --global-batch 1536 "
      "--trace-preset llama3-like --seeds 3 --policy recycle,checkpoint --spares 0,4",
  }));
  Command c;
  c.app = sub;
  c.run = [a, seeds, policy, spares, interval, candidates] {
    if (!a->gpus && !a->nodes) throw InputError("--gpus", "required: give --gpus N or --nodes N");
    for (const CLI::Option* o : {seeds, policy, spares, interval, candidates}) {
      if (o->count() > 0) a->failure_flags_given.push_back(o->get_name());
    }
    return run_configure(*a);
  };
  return c;
}

}  // namespace recycle::tools
