// A trace file replayed on a job's cluster, the one rule `study` and `configure` under failures
// follow for every point or configuration they replay.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/units.hpp"
#include "traces/mapping.hpp"
#include "traces/trace.hpp"

namespace recycle::sim {

/// `trace` on a cluster of `nodes` nodes: mapped onto them when `map` is given (its nodes set to
/// `nodes`), else the trace as it is, which must have watched exactly `nodes` nodes (InputError
/// naming --trace and `who`, e.g. "point 3 (rate=4)", and saying that --map replays it).
[[nodiscard]] traces::Trace trace_on_cluster(const traces::Trace& trace,
                                             const std::optional<traces::MapOptions>& map,
                                             std::int64_t nodes, const std::string& who);

/// How much of `trace` a replay covers (ReplayOptions::duration): all of it (-1) when `days` is
/// not above 0, else its first `days`, at most the whole trace.
[[nodiscard]] Nanos replay_duration(const traces::Trace& trace, double days);

}  // namespace recycle::sim
