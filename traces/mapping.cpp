#include "traces/mapping.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "traces/node_pool.hpp"

namespace recycle::traces {

namespace {

/// For wrap and sample: which trace node each cluster node replays.
std::vector<NodeId> sources(const MapOptions& options, std::int64_t trace_nodes) {
  std::vector<NodeId> source(static_cast<std::size_t>(options.nodes));
  if (options.mode == MapMode::kWrap) {
    for (std::size_t j = 0; j < source.size(); ++j)
      source[j] = static_cast<NodeId>(static_cast<std::int64_t>(j) % trace_nodes);
    return source;
  }
  // Rounds of a shuffled deck of the trace nodes (Fisher-Yates, drawn as needed).
  Rng rng(options.seed);
  std::vector<NodeId> deck;
  std::size_t dealt = 0;
  for (NodeId& s : source) {
    if (dealt == deck.size()) {
      deck.resize(static_cast<std::size_t>(trace_nodes));
      for (std::size_t i = 0; i < deck.size(); ++i) deck[i] = static_cast<NodeId>(i);
      dealt = 0;
    }
    const std::size_t pick = dealt + static_cast<std::size_t>(rng.below(deck.size() - dealt));
    std::swap(deck[dealt], deck[pick]);
    s = deck[dealt++];
  }
  return source;
}

/// Copies the trace's causes into the builder, keeping their ids.
void copy_causes(const Trace& trace, TraceBuilder& builder) {
  for (std::size_t i = 1; i < trace.causes().size(); ++i) {
    const CauseId id = builder.cause(trace.causes()[i]);
    RECYCLE_ASSERT(id == i, "causes must keep their ids");
  }
}

/// Refuses a mapping that would make more than kMaxEvents events, before making any.
void require_events(double events, const Trace& trace, const MapOptions& options) {
  if (events <= static_cast<double>(kMaxEvents)) return;
  throw InputError(
      "--cluster",
      fmt::format("--map {} of {} events on {} nodes onto {} nodes makes {}{:.4g} "
                  "events; the limit is {}",
                  to_string(options.mode), trace.events().size(), trace.node_count(), options.nodes,
                  options.mode == MapMode::kScale ? "up to " : "", events, kMaxEvents));
}

void replay_nodes(const Trace& trace, const MapOptions& options, TraceBuilder& builder) {
  const std::vector<NodeId> source = sources(options, trace.node_count());
  std::vector<std::vector<NodeId>> targets(static_cast<std::size_t>(trace.node_count()));
  for (std::size_t j = 0; j < source.size(); ++j)
    targets[source[j]].push_back(static_cast<NodeId>(j));
  double events = 0;
  for (const Event& event : trace.events())
    events += static_cast<double>(targets[event.node].size());
  require_events(events, trace, options);
  for (const Event& event : trace.events()) {
    for (const NodeId target : targets[event.node]) {
      builder.add(event.time, target, event.kind, event.cause, "mapping", 0);
    }
  }
}

/// Returns how many outages found no node up.
std::int64_t replay_outages(const Trace& trace, const MapOptions& options, TraceBuilder& builder) {
  Rng rng(options.seed);
  const double ratio = static_cast<double>(options.nodes) / static_cast<double>(trace.node_count());
  const auto whole = static_cast<std::int64_t>(std::floor(ratio));
  const double fraction = ratio - static_cast<double>(whole);
  // Each outage is replayed at most ceil(ratio) times, each copy a down and an up.
  const auto all = outages(trace);
  require_events(2.0 * static_cast<double>(all.size()) * std::ceil(ratio), trace, options);
  NodePool pool(options.nodes);
  const auto come_up = [&](Nanos at, NodeId node) {
    builder.add(at, node, EventKind::kUp, 0, "mapping", 0);
  };
  std::int64_t dropped = 0;
  for (const Outage& outage : all) {
    pool.repair_until(outage.down, come_up);
    const std::int64_t copies = whole + (fraction > 0 && rng.uniform() < fraction ? 1 : 0);
    for (std::int64_t c = 0; c < copies; ++c) {
      if (!pool.any_up()) {
        ++dropped;
        continue;
      }
      const NodeId node = pool.take(rng, outage.up);
      builder.add(outage.down, node, EventKind::kDown, outage.cause, "mapping", 0);
    }
  }
  pool.repair_until(trace.duration(), come_up);
  return dropped;
}

}  // namespace

MapMode parse_map_mode(std::string_view name, const std::string& where) {
  if (name == "wrap") return MapMode::kWrap;
  if (name == "sample") return MapMode::kSample;
  if (name == "scale") return MapMode::kScale;
  throw InputError(where,
                   "unknown mapping '" + std::string(name) + "', expected wrap, sample or scale");
}

std::string_view to_string(MapMode mode) noexcept {
  switch (mode) {
    case MapMode::kWrap:
      return "wrap";
    case MapMode::kSample:
      return "sample";
    case MapMode::kScale:
      return "scale";
  }
  return "?";
}

Trace map_trace(const Trace& trace, const MapOptions& options) {
  if (options.nodes < 1 || options.nodes > kMaxNodes) {
    throw InputError("--cluster", "must be in [1, " + std::to_string(kMaxNodes) + "], got " +
                                      std::to_string(options.nodes));
  }
  if (trace.node_count() < 1) throw InputError("--map", "the trace has no nodes to map");
  TraceBuilder builder(TraceBuilder::Naming::kNumbered, false);
  for (const std::string& comment : trace.comments()) builder.add_comment(comment);
  builder.add_comment(fmt::format("mapped from {} to {} nodes: --map {} --seed {}",
                                  trace.node_count(), options.nodes, to_string(options.mode),
                                  options.seed));
  builder.set_node_count(options.nodes, "--cluster");
  builder.set_duration(trace.duration(), "--map");
  copy_causes(trace, builder);
  std::int64_t dropped = 0;
  if (options.mode == MapMode::kScale) {
    dropped = replay_outages(trace, options, builder);
  } else {
    replay_nodes(trace, options, builder);
  }
  if (dropped > 0)
    builder.add_comment(fmt::format("{} outages found no node up and were dropped", dropped));
  return std::move(builder).finish().trace;
}

}  // namespace recycle::traces
