// What-if studies (`recycle study`): a grid of job variants — failure rate, cluster size, spares,
// checkpoint interval, DP x PP split, any field of the job file — each replayed under the
// resilience policies, on every core, one CSV row per point, seed and policy. `--shard I/N` runs
// every N-th point so a large study runs as a job array; merge_study() joins the slices into the
// file an unsharded run writes, byte for byte (docs/policies.md, "Studies").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/replay/replay_policies.hpp"
#include "sim/replay/step_table.hpp"
#include "traces/mapping.hpp"
#include "traces/trace.hpp"

namespace recycle::sim {

/// One --sweep: `key=v1,v2` or paired keys `k1/k2=a1/a2,b1/b2` that move together. A key is a
/// dotted path into the job file (`cluster.spares`, `parallel.pp`) or, with a trace preset, `rate`
/// (failures per 1,000 node-days), `days` or `burst` (`P:K` or `none`, as `trace gen --burst`).
struct SweepAxis {
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> values;  ///< per value: one entry per key
};

/// InputError naming `--sweep` for a malformed sweep.
[[nodiscard]] SweepAxis parse_sweep(const std::string& text);

struct Shard {
  std::int64_t index = 0;
  std::int64_t count = 1;
};
/// "I/N" with 0 <= I < N; InputError naming `--shard` otherwise.
[[nodiscard]] Shard parse_shard(const std::string& text);

struct StudyOptions {
  nlohmann::json job;      ///< the job file's JSON, before the sweep's values are set
  std::string job_source;  ///< its path, for errors
  std::vector<SweepAxis> axes;
  std::vector<PolicyKind> policies;
  /// A trace file (every point replays it, mapped onto its cluster when `map` is given) ...
  std::optional<traces::Trace> trace;
  std::optional<traces::MapOptions> map;  ///< mode and seed; the nodes are each point's
  /// ... or a generator preset, one trace per point and seed (seeds 1..seeds).
  std::string preset;
  std::int64_t seeds = 1;
  double days = 30;  ///< the preset's length, or how much of the trace file to replay (0: all)
  const StepTable* table = nullptr;
  Shard shard;
  std::size_t threads = 0;  ///< 0: every core
};

/// The number of grid points.
[[nodiscard]] std::int64_t study_points(const std::vector<SweepAxis>& axes);

/// The CSV of this shard's points: a comment naming the grid, a header, one row per point, seed
/// and policy in that order. InputError naming the point for a variant that cannot run.
[[nodiscard]] std::string run_study(const StudyOptions& options);

/// Joins shards' CSVs (path, text) into the unsharded file. InputError naming the file for
/// different grids, a row given twice or missing.
[[nodiscard]] std::string merge_study(
    const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace recycle::sim
