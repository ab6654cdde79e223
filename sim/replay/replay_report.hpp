// What `recycle replay` prints and writes: the policy table, the JSON report, the throughput
// timeline as CSV and as an SVG line chart (one line per policy). docs/policies.md says what
// every number means.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sim/replay/replay.hpp"
#include "sim/replay/spares.hpp"

namespace recycle::sim {

/// A header with the replay's setting, one row per policy, and ReCycle's throughput over each
/// other policy's when ReCycle ran.
[[nodiscard]] std::string replay_table(const ReplayResult& result, const std::string& title);
/// "note: ReCycle's adaptive plan for 1 failed worker runs at ..., faster than fault-free ...";
/// empty when no plan outran the job's schedule.
[[nodiscard]] std::string outrun_line(const ReplayResult& result);
/// "spares: checkpoint-restart needs 3 spare nodes to match ...": the answer of match_spares.
[[nodiscard]] std::string spares_text(const SparesMatch& match);
[[nodiscard]] nlohmann::ordered_json spares_json(const SparesMatch& match);
/// {"duration_s", ..., "policies": [{"policy", "samples", "goodput", "ettr",
/// "mean_throughput_samples_per_s", "lost_s": {...}, "gpu_hours", ...}]}
[[nodiscard]] nlohmann::ordered_json replay_json(const ReplayResult& result);
/// `time_s,policy,samples_per_s`: one row where a policy's throughput changes (a step function).
[[nodiscard]] std::string replay_timeline_csv(const ReplayResult& result);
/// Throughput over days, averaged over equal bins (hours for a month), one line per policy.
[[nodiscard]] std::string replay_svg(const ReplayResult& result, const std::string& title);

}  // namespace recycle::sim
