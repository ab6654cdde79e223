// The configuration ranking under failures (`recycle configure --trace-preset ... | --trace ...`):
// the fastest configurations of the fault-free search (planner/configure.hpp) each replayed, as
// `recycle replay` replays a job, under each policy and number of spare nodes, on the same failures
// (one trace per seed, mapped onto each configuration's cluster), and ranked by the samples they
// train per second of wall clock (docs/configure.md, "Under failures").
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/configure.hpp"
#include "sim/replay/replay_clock.hpp"
#include "sim/replay/replay_policies.hpp"
#include "traces/mapping.hpp"
#include "traces/trace.hpp"

namespace recycle::sim {

struct FailureSpace {
  nlohmann::json model;     ///< as a job file holds it: a shipped name or a spec
  nlohmann::json hardware;  ///< likewise
  std::vector<PolicyKind> policies;
  std::vector<std::int64_t> spares = {0};  ///< spare nodes, each count replayed
  /// Training seconds between checkpoints; nullopt: the replay's `auto` interval.
  std::optional<Seconds> checkpoint_interval;
  /// A generator preset, one trace per seed 1..seeds of `days` ...
  std::string preset;
  std::optional<double> rate;  ///< failures per 1,000 node-days in place of the preset's
  std::int64_t seeds = 3;
  double days = 30;
  /// ... or a trace file, mapped onto each cluster (`map.nodes` is set per configuration) or
  /// replayed as it is when its nodes are the cluster's; `days` > 0 replays only that much.
  std::optional<traces::Trace> trace;
  std::optional<traces::MapOptions> map;
  std::size_t threads = 0;  ///< 0: every core; the result is the same whatever the count
  /// Called with the fraction of the replays done (0..1); may be empty.
  std::function<void(double)> progress;
};

/// One configuration under one policy and number of spares, over the seeds.
struct FailureRow {
  std::size_t candidate = 0;  ///< index into the configurations given (their fault-free rank - 1)
  PolicyKind policy = PolicyKind::kRecycle;
  std::int64_t spares = 0;
  double samples_per_s = 0;  ///< mean over seeds of samples kept / wall-clock second
  double slowest = 0;        ///< the least and the most over seeds
  double fastest = 0;
  double goodput = 0;                        ///< mean over seeds
  double samples_per_gpu_hour = 0;           ///< mean samples over mean GPU-hours, spares counted
  std::array<double, kLostCauses> lost_s{};  ///< mean over seeds
  std::string unfit;                         ///< the policy cannot run this configuration
};

/// Every configuration x policy x spares, best first (samples per second; ties in the order of
/// the fault-free ranking, then fewer spares, then the policies' order; rows a policy cannot run
/// last). InputError naming the
/// configuration for one the replay refuses (a trace that does not fit its cluster).
[[nodiscard]] std::vector<FailureRow> rank_under_failures(
    const std::vector<planner::Configuration>& configurations, const FailureSpace& space);

/// The job file of a configuration (profiles::job_to_json) with `spares` spare nodes and the
/// checkpoint interval of `space` (what `--write-job` writes and each replay reads).
[[nodiscard]] nlohmann::ordered_json configuration_job(const planner::Configuration& c,
                                                       const FailureSpace& space,
                                                       std::int64_t spares);

}  // namespace recycle::sim
