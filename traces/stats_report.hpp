// The report of `recycle trace stats`: the numbers of stats.hpp as text for people or as JSON for
// programs, with fixed decimals so that the same trace gives the same bytes.
#pragma once

#include <string>

#include "traces/stats.hpp"

namespace recycle::traces {

/// For a trace read from `source`; `repairs` is what a lenient read dropped.
[[nodiscard]] std::string format_stats_text(const TraceStats& stats, const std::string& source,
                                            const Repairs& repairs);
/// The same as one JSON object: durations in hours, times in seconds, as the key names say.
[[nodiscard]] std::string format_stats_json(const TraceStats& stats, const std::string& source,
                                            const Repairs& repairs);

}  // namespace recycle::traces
