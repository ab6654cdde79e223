// The timeline as a Chrome trace (the JSON "trace event format" that chrome://tracing and
// https://ui.perfetto.dev open). One process per worker, named "worker (dp,stage)" and sorted by
// global rank; in it one thread (track) each for the compute stream, the send queue, the receive
// queue and the gradient all-reduce. One complete event (ph "X") per action or transfer that takes
// time, labelled with its token; ts and dur in microseconds (three decimals: exact nanoseconds).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/simulator.hpp"

namespace recycle::sim {

/// Nanoseconds as the trace's microseconds: exactly three decimals, no floating-point rounding.
[[nodiscard]] std::string trace_micros(Nanos ns);

/// The writer behind chrome_trace(), for timelines measured elsewhere (`recycle validate`): the
/// same processes, tracks and event shapes, so predicted and measured open side by side.
class ChromeTraceWriter {
 public:
  enum Track : int { kCompute = 1, kComm = 2, kAllReduce = 3 };

  /// Names one process per worker of `schedule` with its three tracks.
  explicit ChromeTraceWriter(const planner::Schedule& schedule);
  /// A complete event (ph "X"): [start, end) in nanoseconds.
  void slice(planner::WorkerId worker, Track track, const std::string& name,
             std::string_view category, Nanos start, Nanos end, const std::string& args);
  /// An instant event (ph "i") on the worker's compute track.
  void mark(planner::WorkerId worker, const std::string& name, Nanos at);
  [[nodiscard]] std::string finish() &&;

 private:
  [[nodiscard]] std::int64_t pid_of(planner::WorkerId id) const noexcept;
  void event(const std::string& text);

  std::int32_t pp_;
  std::string out_;
  bool first_ = true;
};

/// The trace args of one action: iteration, and for a micro-batch its index, its owner and
/// whether it was re-routed.
[[nodiscard]] std::string action_args(const planner::Action& a, std::int32_t worker_dp,
                                      std::int32_t iteration);

/// `iteration` (0-based) keeps only that iteration's actions, transfers and all-reduces.
[[nodiscard]] std::string chrome_trace(const SimRun& run,
                                       std::optional<std::int32_t> iteration = std::nullopt);

}  // namespace recycle::sim
