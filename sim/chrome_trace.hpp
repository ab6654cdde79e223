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

/// `iteration` (0-based) keeps only that iteration's actions, transfers and all-reduces.
[[nodiscard]] std::string chrome_trace(const SimRun& run,
                                       std::optional<std::int32_t> iteration = std::nullopt);

}  // namespace recycle::sim
