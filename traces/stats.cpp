#include "traces/stats.hpp"

#include <algorithm>
#include <cmath>

namespace recycle::traces {

namespace {

/// Nearest rank: the ceil(p/100 * n)-th smallest of sorted values.
double percentile(const std::vector<double>& sorted, double p) {
  const auto rank =
      static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::max<std::size_t>(rank, 1) - 1];
}

RepairSummary summarize_repairs(std::vector<double> lengths_h) {
  std::sort(lengths_h.begin(), lengths_h.end());
  RepairSummary r;
  r.count = static_cast<std::int64_t>(lengths_h.size());
  r.p50_h = percentile(lengths_h, 50);
  r.p90_h = percentile(lengths_h, 90);
  r.p99_h = percentile(lengths_h, 99);
  double sum = 0;
  for (const double h : lengths_h) sum += h;
  r.mean_h = sum / static_cast<double>(lengths_h.size());
  r.max_h = lengths_h.back();
  std::vector<double> positive;
  for (const double h : lengths_h) (h > 0 ? positive.push_back(h) : void(++r.zero));
  r.lognormal = fit_lognormal(positive);
  return r;
}

void count_failures(const Trace& trace, TraceStats& s) {
  std::vector<Nanos> last_failure(static_cast<std::size_t>(trace.node_count()), -1);
  std::vector<double> node_gaps_h;
  std::vector<std::int64_t> by_cause(trace.causes().size(), 0);
  for (const Event& event : trace.events()) {
    if (event.kind != EventKind::kDown) continue;
    if (event.time == 0) {
      ++s.initially_down;
      continue;
    }
    ++s.failures;
    ++by_cause[event.cause];
    Nanos& last = last_failure[event.node];
    if (last < 0) ++s.nodes_failed;
    if (last >= 0 && event.time > last) node_gaps_h.push_back(to_hours(event.time - last));
    last = event.time;
  }
  s.node_tbf_gaps = static_cast<std::int64_t>(node_gaps_h.size());
  s.node_tbf = fit_weibull(node_gaps_h);
  for (std::size_t i = 0; i < by_cause.size(); ++i) {
    if (by_cause[i] > 0) s.causes.emplace_back(trace.cause(static_cast<CauseId>(i)), by_cause[i]);
  }
  std::sort(s.causes.begin(), s.causes.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
}

void count_bursts(const Trace& trace, TraceStats& s) {
  std::vector<double> gaps_h;
  Nanos first = -1;
  Nanos instant = -1;
  std::int64_t size = 0;
  for (const Event& event : trace.events()) {
    if (event.kind != EventKind::kDown || event.time == 0) continue;
    if (event.time == instant) {
      ++size;
      continue;
    }
    if (instant < 0) {
      first = event.time;
    } else {
      ++s.burst_sizes[size];
      gaps_h.push_back(to_hours(event.time - instant));
    }
    instant = event.time;
    size = 1;
  }
  if (size > 0) ++s.burst_sizes[size];
  s.failure_instants = instant < 0 ? 0 : static_cast<std::int64_t>(gaps_h.size()) + 1;
  s.interarrival_gaps = static_cast<std::int64_t>(gaps_h.size());
  if (!gaps_h.empty())
    s.interarrival_mean_h = to_hours(instant - first) / static_cast<double>(gaps_h.size());
  s.interarrival = fit_weibull(gaps_h);
}

void count_down_nodes(const Trace& trace, TraceStats& s) {
  const std::vector<Event>& events = trace.events();
  std::int64_t down = 0;
  double node_nanos = 0;  // integral of nodes down over time
  Nanos previous = 0;
  for (std::size_t i = 0; i < events.size();) {
    const Nanos now = events[i].time;
    node_nanos += static_cast<double>(down) * static_cast<double>(now - previous);
    for (; i < events.size() && events[i].time == now; ++i) {
      down += events[i].kind == EventKind::kDown ? 1 : -1;
    }
    if (down > s.peak_down) {
      s.peak_down = down;
      s.peak_down_at = now;
    }
    previous = now;
  }
  node_nanos += static_cast<double>(down) * static_cast<double>(trace.duration() - previous);
  s.down_at_end = down;
  s.mean_down = trace.duration() > 0 ? node_nanos / static_cast<double>(trace.duration())
                                     : static_cast<double>(down);
}

}  // namespace

TraceStats compute_stats(const Trace& trace) {
  TraceStats s;
  s.nodes = trace.node_count();
  s.events = static_cast<std::int64_t>(trace.events().size());
  s.duration = trace.duration();
  if (!trace.events().empty()) {
    s.first_event = trace.events().front().time;
    s.last_event = trace.events().back().time;
  }
  count_failures(trace, s);
  count_bursts(trace, s);
  count_down_nodes(trace, s);

  const double watched_h = to_hours(trace.duration());
  if (s.nodes > 0 && watched_h > 0) {
    s.failures_per_1000_node_days = static_cast<double>(s.failures) /
                                    (static_cast<double>(s.nodes) * watched_h / 24.0) * 1000.0;
  }
  if (s.failures > 0 && watched_h > 0) {
    s.mtbf_node_h = static_cast<double>(s.nodes) * watched_h / static_cast<double>(s.failures);
    s.mtbf_cluster_h = watched_h / static_cast<double>(s.failures);
  }
  std::vector<double> repairs_h;
  for (const Outage& outage : outages(trace)) {
    if (outage.down > 0 && outage.up >= 0) repairs_h.push_back(to_hours(outage.up - outage.down));
  }
  if (!repairs_h.empty()) s.repair = summarize_repairs(std::move(repairs_h));
  return s;
}

}  // namespace recycle::traces
