#include "sim/replay/trace_on_cluster.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"

namespace recycle::sim {

traces::Trace trace_on_cluster(const traces::Trace& trace,
                               const std::optional<traces::MapOptions>& map, std::int64_t nodes,
                               const std::string& who) {
  if (map) {
    traces::MapOptions on = *map;
    on.nodes = nodes;
    return traces::map_trace(trace, on);
  }
  if (trace.node_count() != nodes) {
    throw InputError("--trace",
                     fmt::format("{}: the trace watched {} nodes and the cluster has {}; "
                                 "--map says how to replay it",
                                 who, trace.node_count(), nodes));
  }
  return trace;
}

Nanos replay_duration(const traces::Trace& trace, double days) {
  if (!(days > 0)) return -1;
  return std::min(trace.duration(), traces::seconds_to_trace_time(days * traces::kSecondsPerDay));
}

}  // namespace recycle::sim
