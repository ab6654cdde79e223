// Replaying a trace recorded on N nodes on a cluster of M nodes. Three modes:
//  - wrap:   cluster node j replays trace node j mod N. M < N keeps the first M trace nodes; M > N
//            repeats the trace, and the copies of a node fail together (bursts grow).
//  - sample: cluster node j replays a trace node drawn at random (seeded): distinct nodes while
//            M <= N; for M > N every trace node is used floor(M/N) or ceil(M/N) times (copies fail
//            together, as with wrap).
//  - scale:  keeps the cluster-wide pattern of failures in time and their repair times, at M/N
//            times the count: each outage of the trace is replayed floor(M/N) times, plus once more
//            with probability frac(M/N), each time on a cluster node drawn at random among those up
//            (an outage finding no node up is dropped). Failures per node-day stay the same.
// All modes keep times, causes and the observation's length, and give a numbered trace.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "traces/trace.hpp"

namespace recycle::traces {

enum class MapMode { kWrap, kSample, kScale };

/// "wrap", "sample" or "scale"; `where` names the flag in errors.
[[nodiscard]] MapMode parse_map_mode(std::string_view name, const std::string& where);
[[nodiscard]] std::string_view to_string(MapMode mode) noexcept;

struct MapOptions {
  MapMode mode = MapMode::kWrap;
  std::int64_t nodes = 0;  ///< M, the cluster's nodes
  std::uint64_t seed = 0;  ///< for sample and scale
};

/// Errors name `--cluster` (the node count).
[[nodiscard]] Trace map_trace(const Trace& trace, const MapOptions& options);

}  // namespace recycle::traces
