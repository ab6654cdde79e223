// Failure traces: machines going down and coming back. This module knows nothing about pipelines.
//
// Concepts:
//  - Event: at `time` a `node` goes `down` or comes back `up`, with a free-text `cause`. A `down`
//  at
//    time 0 is the node's initial state (it was already down when the observation began), not a
//    failure.
//  - Trace: the events of one observation, sorted by time, plus how many nodes were watched
//    (including the ones that never failed) and for how long. Per node, events alternate down, up,
//    down, ..., starting with down; a node may still be down at the end.
//  - TraceBuilder: the one way to make a Trace. It enforces the ordering and alternation rules and
//    throws an InputError naming `file:line`, or, when lenient, drops the offending event and
//    counts it in Repairs.
//  - Where traces come from and go: the native CSV (native_csv.hpp), importers of real traces
//    (import.hpp), the synthetic generator (generator.hpp); what is in them: stats.hpp; replaying a
//    trace on a cluster of another size: mapping.hpp. docs/traces.md describes all of it.
//
// Times inside are Nanos since the start of the observation, whole microseconds (the resolution of
// the native file); files hold seconds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/units.hpp"

namespace recycle::traces {

enum class EventKind : std::uint8_t { kDown, kUp };

using NodeId = std::uint32_t;   ///< dense index of a node in its trace
using CauseId = std::uint32_t;  ///< index into Trace::causes(); 0 is the empty cause

/// Node ids and counts are below this (keeps per-node tables small and ids in 32 bits).
inline constexpr std::int64_t kMaxNodes = 1 << 24;
/// Readers and generators refuse to make more events than this.
inline constexpr std::int64_t kMaxEvents = 50'000'000;
/// Times are at most this far from the start (about 31.7 years).
inline constexpr Nanos kMaxTime = 1'000'000'000 * kNanosPerSecond;
/// The resolution of times in a trace.
inline constexpr Nanos kTimeResolution = 1'000;

struct Event {
  Nanos time = 0;
  NodeId node = 0;
  CauseId cause = 0;
  EventKind kind = EventKind::kDown;

  friend bool operator==(const Event&, const Event&) = default;
};

inline constexpr double kSecondsPerHour = 3'600.0;
inline constexpr double kSecondsPerDay = 86'400.0;

/// The longest trace: kMaxTime in days (about 11,574).
inline constexpr double kMaxDays = to_seconds(kMaxTime) / kSecondsPerDay;

[[nodiscard]] constexpr double to_hours(Nanos t) noexcept {
  return to_seconds(t) / kSecondsPerHour;
}
[[nodiscard]] constexpr double to_days(Nanos t) noexcept {
  return to_seconds(t) / kSecondsPerDay;
}

/// "down" / "up".
[[nodiscard]] std::string_view to_string(EventKind kind) noexcept;

/// Seconds with 3 decimals, or 6 when the time is not whole milliseconds ("12.500", "0.000001").
/// Exact for every time a trace holds, and the same on every platform.
[[nodiscard]] std::string format_seconds(Nanos time);

/// Rounds seconds read from a file to the trace resolution (1 µs).
[[nodiscard]] Nanos seconds_to_trace_time(Seconds seconds) noexcept;

/// Reads a time or duration in seconds from a file or flag: a number in [0, 1e9], rounded to 1 µs.
/// Errors name `where` and say `what` the number is ("time_s", "date", ...).
[[nodiscard]] Nanos read_seconds(std::string_view text, const std::string& where,
                                 std::string_view what);

/// The one rule for a length in days (--days of every command): more than 0, at most `max_days`
/// (`bound` says what that limit is: "11574 days", "the trace's 2 days"), and at least a
/// millisecond, the coarsest step a trace is generated or cut at, so that it never rounds to no
/// time. Errors name `flag`; `text` is the value as given.
void check_days(double days, std::string_view text, const std::string& flag, double max_days,
                std::string_view bound);
/// Reads a length in days from flag `flag` and applies check_days.
[[nodiscard]] double read_days(std::string_view text, const std::string& flag, double max_days,
                               std::string_view bound);
/// The bound of check_days for a length with no trace to end it: kMaxDays as text.
[[nodiscard]] std::string max_days_text();

class Trace {
 public:
  /// Sorted by time; events at the same time keep the order they were added in.
  [[nodiscard]] const std::vector<Event>& events() const noexcept { return events_; }
  /// Nodes watched: at least one more than the largest node id in the events.
  [[nodiscard]] std::int64_t node_count() const noexcept { return node_count_; }
  /// The observation is [0, duration]; every event lies in it.
  [[nodiscard]] Nanos duration() const noexcept { return duration_; }
  /// True when node names are their ids ("0", "1", ...); false when they are free-form names.
  [[nodiscard]] bool numbered() const noexcept { return numbered_; }
  /// The node's name as written in files. For a named trace, nodes without events have none ("").
  [[nodiscard]] std::string node_name(NodeId node) const;
  [[nodiscard]] const std::vector<std::string>& causes() const noexcept { return causes_; }
  [[nodiscard]] const std::string& cause(CauseId cause) const { return causes_.at(cause); }
  /// Free-text lines kept with the trace (provenance: which generator, which source file).
  [[nodiscard]] const std::vector<std::string>& comments() const noexcept { return comments_; }

 private:
  friend class TraceBuilder;

  std::vector<Event> events_;
  std::int64_t node_count_ = 0;
  Nanos duration_ = 0;
  bool numbered_ = true;
  std::vector<std::string> names_;  ///< named traces only; index = NodeId
  std::vector<std::string> causes_{""};
  std::vector<std::string> comments_;
};

/// What a lenient read dropped to make a trace valid.
struct Repairs {
  std::int64_t up_without_down = 0;  ///< `up` events of a node that was not down
  std::int64_t repeated_down = 0;    ///< `down` events of a node that was already down

  [[nodiscard]] std::int64_t total() const noexcept { return up_without_down + repeated_down; }
};

/// A trace as read from a file, with what had to be repaired to read it.
struct LoadedTrace {
  Trace trace;
  Repairs repairs;
  std::vector<std::string> notes;  ///< what an importer did that a user should know, one line each
};

/// One outage: a `down` and the `up` that ends it.
struct Outage {
  NodeId node = 0;
  Nanos down = 0;
  Nanos up = -1;  ///< -1: still down at the end of the trace
  CauseId cause = 0;
};

/// The outages of a trace, in the order of their `down` events.
[[nodiscard]] std::vector<Outage> outages(const Trace& trace);

class TraceBuilder {
 public:
  enum class Naming {
    kNumbered,  ///< node ids are given by the caller: 0, 1, 2, ...
    kNamed,     ///< nodes are free-form names, numbered in order of first appearance
  };

  TraceBuilder(Naming naming, bool lenient);

  /// The id of a named node, made on first use (kNamed only).
  [[nodiscard]] NodeId named_node(std::string_view name);
  [[nodiscard]] CauseId cause(std::string_view text);

  /// Appends an event. `source` and `line` say where it came from (line 0: no line), for errors:
  /// a time before the previous event's, an `up` of a node that is not down, a `down` of a node
  /// already down. Lenient, the last two are dropped and counted instead.
  void add(Nanos time, NodeId node, EventKind kind, CauseId cause, std::string_view source,
           std::size_t line);

  /// Declares how many nodes were watched; `where` names the declaration for errors in finish().
  void set_node_count(std::int64_t nodes, std::string where);
  /// Declares how long the observation lasted (default: until the last event).
  void set_duration(Nanos duration, std::string where);
  void add_comment(std::string comment);

  /// Checks the declarations against the events and hands over the trace.
  [[nodiscard]] LoadedTrace finish() &&;

 private:
  [[noreturn]] void fail(std::string_view source, std::size_t line,
                         const std::string& problem) const;
  [[nodiscard]] std::string describe(NodeId node) const;

  Trace trace_;
  bool lenient_;
  Repairs repairs_;
  std::unordered_map<std::string, NodeId> node_ids_;
  std::unordered_map<std::string, CauseId> cause_ids_;
  Nanos last_time_ = 0;            ///< of the last event added, kept or dropped
  std::vector<Nanos> down_since_;  ///< per node: time it went down, or -1 while it is up
  std::int64_t declared_nodes_ = 0;
  std::string nodes_where_;
  Nanos declared_duration_ = -1;
  std::string duration_where_;
};

}  // namespace recycle::traces
