#include "traces/trace.hpp"

#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/parse.hpp"

namespace recycle::traces {

std::string_view to_string(EventKind kind) noexcept {
  return kind == EventKind::kDown ? "down" : "up";
}

std::string format_seconds(Nanos time) {
  const Nanos whole = time / kNanosPerSecond;
  const Nanos fraction = time % kNanosPerSecond;
  if (fraction % 1'000'000 == 0) return fmt::format("{}.{:03}", whole, fraction / 1'000'000);
  if (fraction % 1'000 == 0) return fmt::format("{}.{:06}", whole, fraction / 1'000);
  return fmt::format("{}.{:09}", whole, fraction);
}

Nanos seconds_to_trace_time(Seconds seconds) noexcept {
  return std::llround(seconds * 1e6) * kTimeResolution;
}

Nanos read_seconds(std::string_view text, const std::string& where, std::string_view what) {
  const double seconds = parse_double(text, where);
  if (seconds < 0 || seconds > to_seconds(kMaxTime)) {
    throw InputError(where,
                     std::string(what) + " must be in [0, 1e9] seconds, got " + shown(trim(text)));
  }
  return seconds_to_trace_time(seconds);
}

void check_days(double days, std::string_view text, const std::string& flag, double max_days,
                std::string_view bound) {
  if (!(days > 0) || days > max_days) {
    throw InputError(flag,
                     fmt::format("must be > 0 and at most {}, got {}", bound, shown(trim(text))));
  }
  if (days * kSecondsPerDay < 1e-3) {
    throw InputError(flag, fmt::format("{} days is shorter than a millisecond, the finest step a "
                                       "trace is generated or cut at",
                                       shown(trim(text))));
  }
}

double read_days(std::string_view text, const std::string& flag, double max_days,
                 std::string_view bound) {
  const double days = parse_double(text, flag);
  check_days(days, text, flag, max_days, bound);
  return days;
}

std::string max_days_text() {
  return fmt::format("{:.0f} days", std::floor(kMaxDays));
}

std::vector<Outage> outages(const Trace& trace) {
  std::vector<Outage> out;
  std::vector<std::size_t> open(static_cast<std::size_t>(trace.node_count()), SIZE_MAX);
  for (const Event& event : trace.events()) {
    if (event.kind == EventKind::kDown) {
      open[event.node] = out.size();
      out.push_back({event.node, event.time, -1, event.cause});
    } else {
      out[open[event.node]].up = event.time;
      open[event.node] = SIZE_MAX;
    }
  }
  return out;
}

std::string Trace::node_name(NodeId node) const {
  if (numbered_) return std::to_string(node);
  return node < names_.size() ? names_[node] : std::string();
}

TraceBuilder::TraceBuilder(Naming naming, bool lenient) : lenient_(lenient) {
  trace_.numbered_ = naming == Naming::kNumbered;
}

NodeId TraceBuilder::named_node(std::string_view name) {
  RECYCLE_ASSERT(!trace_.numbered_, "named_node() on a trace of numbered nodes");
  const auto [it, inserted] =
      node_ids_.try_emplace(std::string(name), static_cast<NodeId>(trace_.names_.size()));
  if (inserted) trace_.names_.emplace_back(name);
  return it->second;
}

CauseId TraceBuilder::cause(std::string_view text) {
  if (text.empty()) return 0;
  const auto [it, inserted] =
      cause_ids_.try_emplace(std::string(text), static_cast<CauseId>(trace_.causes_.size()));
  if (inserted) trace_.causes_.emplace_back(text);
  return it->second;
}

void TraceBuilder::fail(std::string_view source, std::size_t line,
                        const std::string& problem) const {
  std::string where(source);
  if (line > 0) where += ":" + std::to_string(line);
  throw InputError(where, problem);
}

std::string TraceBuilder::describe(NodeId node) const {
  return "node " +
         (trace_.numbered_ ? std::to_string(node) : "'" + shown(trace_.names_.at(node)) + "'");
}

void TraceBuilder::add(Nanos time, NodeId node, EventKind kind, CauseId cause,
                       std::string_view source, std::size_t line) {
  RECYCLE_ASSERT(cause < trace_.causes_.size(), "cause id not made by this builder");
  if (node >= kMaxNodes) {
    fail(source, line, "more than " + std::to_string(kMaxNodes) + " nodes");
  }
  if (std::ssize(trace_.events_) >= kMaxEvents) {
    fail(source, line, "more than " + std::to_string(kMaxEvents) + " events");
  }
  if (time < 0 || time > kMaxTime) {
    fail(source, line, "time " + format_seconds(time) + " s is outside [0, 1e9] s");
  }
  if (time < last_time_) {
    fail(source, line,
         "time goes backwards: " + format_seconds(time) + " s after " + format_seconds(last_time_) +
             " s (events must be sorted by time)");
  }
  last_time_ = time;  // also for events a lenient read drops
  if (node >= down_since_.size()) down_since_.resize(node + 1, -1);
  Nanos& down_since = down_since_[node];
  if (kind == EventKind::kUp && down_since < 0) {
    if (!lenient_) {
      fail(source, line,
           describe(node) + " comes up but is not down (use --lenient to drop such events)");
    }
    ++repairs_.up_without_down;
    return;
  }
  if (kind == EventKind::kDown && down_since >= 0) {
    if (!lenient_) {
      fail(source, line,
           describe(node) + " goes down again without coming up since " +
               format_seconds(down_since) + " s (use --lenient to drop such events)");
    }
    ++repairs_.repeated_down;
    return;
  }
  down_since = kind == EventKind::kDown ? time : -1;
  trace_.events_.push_back({time, node, cause, kind});
}

void TraceBuilder::set_node_count(std::int64_t nodes, std::string where) {
  declared_nodes_ = nodes;
  nodes_where_ = std::move(where);
}

void TraceBuilder::set_duration(Nanos duration, std::string where) {
  declared_duration_ = duration;
  duration_where_ = std::move(where);
}

void TraceBuilder::add_comment(std::string comment) {
  trace_.comments_.push_back(std::move(comment));
}

LoadedTrace TraceBuilder::finish() && {
  const auto used =
      static_cast<std::int64_t>(trace_.numbered_ ? down_since_.size() : trace_.names_.size());
  if (declared_nodes_ > 0 && declared_nodes_ < used) {
    throw InputError(nodes_where_,
                     std::to_string(declared_nodes_) + " nodes declared, but the events name " +
                         std::to_string(used) + (trace_.numbered_ ? " (ids from 0)" : ""));
  }
  trace_.node_count_ = std::max(declared_nodes_, used);
  const Nanos last = trace_.events_.empty() ? 0 : trace_.events_.back().time;
  if (declared_duration_ >= 0 && declared_duration_ < last) {
    throw InputError(duration_where_,
                     "the observation is declared to end at " + format_seconds(declared_duration_) +
                         " s, before the last event at " + format_seconds(last) + " s");
  }
  trace_.duration_ = std::max(declared_duration_, last);
  return {std::move(trace_), repairs_, {}};
}

}  // namespace recycle::traces
