// What is in a trace: the numbers `recycle trace stats` prints. Every one is defined in
// docs/traces.md ("Statistics"); durations are in hours, as people quote them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "traces/fits.hpp"
#include "traces/trace.hpp"

namespace recycle::traces {

struct RepairSummary {
  std::int64_t count = 0;  ///< outages that began after time 0 and ended within the trace
  double p50_h = 0;        ///< percentiles by nearest rank: the ceil(p/100 * count)-th shortest
  double p90_h = 0;
  double p99_h = 0;
  double mean_h = 0;
  double max_h = 0;
  std::int64_t zero = 0;                  ///< of length 0, left out of the lognormal fit
  std::optional<LognormalFit> lognormal;  ///< of the lengths in hours
};

struct TraceStats {
  std::int64_t nodes = 0;         ///< nodes watched
  std::int64_t nodes_failed = 0;  ///< nodes with at least one failure
  std::int64_t events = 0;
  Nanos duration = 0;     ///< the observation, [0, duration]
  Nanos first_event = 0;  ///< 0 when there are no events
  Nanos last_event = 0;
  std::int64_t failures = 0;        ///< `down` events after time 0
  std::int64_t initially_down = 0;  ///< `down` events at time 0 (initial state, not failures)
  std::int64_t down_at_end = 0;     ///< nodes still down when the observation ends
  std::optional<double> failures_per_1000_node_days;  ///< needs nodes and a duration
  std::optional<double> mtbf_node_h;                  ///< node-hours watched per failure
  std::optional<double> mtbf_cluster_h;               ///< hours watched per failure
  std::optional<RepairSummary> repair;                ///< when at least one outage ended
  std::int64_t failure_instants = 0;                  ///< distinct times with at least one failure
  std::map<std::int64_t, std::int64_t> burst_sizes;   ///< failures at one instant -> instants
  std::int64_t interarrival_gaps = 0;                 ///< gaps between consecutive failure instants
  double interarrival_mean_h = 0;
  std::optional<WeibullFit> interarrival;  ///< of those gaps, in hours
  std::int64_t node_tbf_gaps = 0;          ///< gaps between consecutive failures of one node (> 0)
  std::optional<WeibullFit> node_tbf;      ///< of those gaps, in hours
  std::int64_t peak_down = 0;              ///< most nodes down at once (after all events at a time)
  Nanos peak_down_at = 0;                  ///< the first time it was reached
  double mean_down = 0;                    ///< nodes down, averaged over the observation
  std::vector<std::pair<std::string, std::int64_t>> causes;  ///< failures by cause, most first

  [[nodiscard]] std::int64_t largest_burst() const noexcept {
    return burst_sizes.empty() ? 0 : burst_sizes.rbegin()->first;
  }
};

[[nodiscard]] TraceStats compute_stats(const Trace& trace);

}  // namespace recycle::traces
