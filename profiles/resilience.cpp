#include "profiles/resilience.hpp"

#include <optional>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "core/json.hpp"
#include "core/parse.hpp"
#include "profiles/synthesizer.hpp"

namespace recycle::profiles {

namespace {

/// Durations stay far below what integer nanoseconds hold over a replay (about 31.7 years).
constexpr double kMaxSeconds = 1e9;
constexpr std::int64_t kMaxNodes = std::int64_t{1} << 24;

Seconds seconds(const JsonView& block, std::string_view key, Seconds fallback, bool positive) {
  const auto x = block.find(key);
  if (!x) return fallback;
  const double s = x->as_nonnegative();
  if (positive && s == 0) x->fail("expected a number > 0, got 0");
  if (s > kMaxSeconds) x->fail("expected at most 1e9 seconds, got " + x->raw().dump());
  // The replay's clock asserts a positive time: one that rounds to 0 ns is refused here.
  if (positive) (void)positive_nanos(s, x->raw().dump(), x->where());
  return s;
}

}  // namespace

Resilience resilience_from_json(const JsonView& root, const ParallelConfig& parallel,
                                std::int32_t hardware_gpus_per_node) {
  Resilience r;
  ClusterBlock& c = r.cluster;
  c.gpus_per_node = hardware_gpus_per_node;
  std::optional<JsonView> nodes;
  std::optional<JsonView> spares;
  std::string where = root.source() + ": cluster";
  if (const auto block = root.find("cluster")) {
    block->only_keys({"nodes", "gpus_per_node", "spares", "placement", "min_nodes"});
    where = block->where();
    nodes = block->find("nodes");
    if (nodes) c.nodes = nodes->as_int(1, kMaxNodes);
    if (const auto x = block->find("gpus_per_node"))
      c.gpus_per_node = static_cast<std::int32_t>(x->as_int(1, 1024));
    spares = block->find("spares");
    if (spares) c.spares = spares->as_int(0, kMaxNodes);
    if (const auto x = block->find("placement")) (void)x->as_choice({"pipeline-major"});
    if (const auto x = block->find("min_nodes")) c.min_nodes = x->as_int(0, kMaxNodes);
  }
  const std::int64_t gpus = std::int64_t{parallel.tp} * parallel.pp * parallel.dp;
  const std::int64_t per_node = c.gpus_per_node;
  r.job_nodes = (gpus + per_node - 1) / per_node;
  if (r.job_nodes > kMaxNodes) {
    throw InputError(where, "the job needs " + std::to_string(r.job_nodes) +
                                " nodes, more than the 16,777,216 a replay takes");
  }
  if (!nodes) {
    c.nodes = r.job_nodes + c.spares;
  } else if (!spares) {
    if (c.nodes < r.job_nodes) {
      throw InputError(nodes->where(),
                       std::to_string(c.nodes) + " nodes cannot hold the job: tp x pp x dp = " +
                           std::to_string(gpus) + " GPUs need " + std::to_string(r.job_nodes) +
                           " nodes of " + std::to_string(per_node) + " GPUs");
    }
    c.spares = c.nodes - r.job_nodes;
  } else if (c.nodes != r.job_nodes + c.spares) {
    throw InputError(nodes->where(), std::to_string(c.nodes) + " nodes is not the job's " +
                                         std::to_string(r.job_nodes) +
                                         " (tp x pp x dp = " + std::to_string(gpus) +
                                         " GPUs over " + std::to_string(per_node) +
                                         " per node) plus " + std::to_string(c.spares) +
                                         " spares; give nodes or spares, or both agreeing");
  }
  if (c.min_nodes > c.nodes) {
    throw InputError(where + ".min_nodes",
                     std::to_string(c.min_nodes) + " nodes is more than the cluster's " +
                         std::to_string(c.nodes) + ": the job would never run");
  }
  if (const auto block = root.find("detection")) {
    block->only_keys({"heartbeat_s", "missed_beats"});
    r.detection.heartbeat_s = seconds(*block, "heartbeat_s", r.detection.heartbeat_s, false);
    if (const auto x = block->find("missed_beats"))
      r.detection.missed_beats = static_cast<std::int32_t>(x->as_int(0, 1'000'000));
    if (r.detection.delay_s() > kMaxSeconds)
      block->fail("heartbeat_s x missed_beats is more than 1e9 seconds");
  }
  if (const auto block = root.find("checkpoint")) {
    block->only_keys({"interval_s", "interval_iterations", "after_restart", "write_s", "load_s"});
    CheckpointBlock& k = r.checkpoint;
    const auto interval = block->find("interval_s");
    if (interval && interval->raw().is_string()) {
      if (interval->as_string() != "auto") {
        interval->fail("expected seconds or \"auto\", got " + interval->raw().dump());
      }
      k.interval_auto = true;
    } else {
      k.interval_s = seconds(*block, "interval_s", k.interval_s, true);
    }
    k.write_s = seconds(*block, "write_s", k.write_s, false);
    k.load_s = seconds(*block, "load_s", k.load_s, false);
    if (const auto x = block->find("interval_iterations")) {
      if (interval) x->fail("give interval_s or interval_iterations, not both");
      k.interval_iterations = x->as_int(1, std::int64_t{1} << 40);
    }
    if (const auto x = block->find("after_restart")) k.after_restart = x->as_bool();
  }
  if (const auto block = root.find("restart")) {
    block->only_keys({"job_restart_s", "node_join_s", "reconfigure_s", "oobleck_reconfigure_s",
                      "bamboo_reconfigure_s", "merge_simultaneous", "rollback", "join"});
    RestartBlock& k = r.restart;
    const auto restart = block->find("job_restart_s");
    if (restart && restart->raw().is_object()) {
      if (restart->raw().empty()) restart->fail("expected seconds or a table {\"nodes\": seconds}");
      for (const auto& [key, value] : restart->raw().items()) {
        const JsonView entry(value, restart->source(), restart->path() + "." + key);
        const std::int64_t n = parse_int(key, entry.where());
        if (n < 1 || n > kMaxNodes)
          entry.fail("expected a node count from 1 to 16777216 as the key");
        const double s = entry.as_nonnegative();
        if (s > kMaxSeconds) entry.fail("expected at most 1e9 seconds, got " + value.dump());
        k.job_restart_by_nodes[n] = s;
      }
    } else {
      k.job_restart_s = seconds(*block, "job_restart_s", k.job_restart_s, false);
    }
    k.node_join_s = seconds(*block, "node_join_s", k.node_join_s, false);
    for (auto [key, field] : {std::pair{"reconfigure_s", &k.reconfigure_s},
                              std::pair{"oobleck_reconfigure_s", &k.oobleck_reconfigure_s},
                              std::pair{"bamboo_reconfigure_s", &k.bamboo_reconfigure_s}}) {
      if (block->find(key)) *field = seconds(*block, key, 0, false);
    }
    if (const auto x = block->find("merge_simultaneous")) k.merge_simultaneous = x->as_bool();
    if (const auto x = block->find("rollback")) k.rollback = x->as_bool();
    if (const auto x = block->find("join")) {
      k.join_at_next_failure = x->as_choice({"now", "next_failure"}) == 1;
    }
  }
  return r;
}

}  // namespace recycle::profiles
