// The timeline as an SVG Gantt chart: one row per worker (sorted by dp, then stage), time left to
// right. A row's upper bar is the compute stream, one box per F/I/W/B/OPT coloured by type and
// labelled with its token where it fits; the thin strip under it shows the worker's outgoing
// transfers (grey) and its stage's gradient all-reduce (purple). Re-routed work (a micro-batch of
// another pipeline) is hatched and outlined in red. Dashed lines mark where iterations end.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/metrics.hpp"
#include "sim/simulator.hpp"

namespace recycle::sim {

/// `iteration` (0-based) draws only that iteration, scaled to fill the width.
/// Text with &, <, > and " escaped for SVG/XML text and attributes; a control character (but tab,
/// newline, carriage return) or a byte that is not well-formed UTF-8 becomes U+FFFD.
[[nodiscard]] std::string xml_escape(std::string_view text);

[[nodiscard]] std::string svg_gantt(const SimRun& run, const Metrics& metrics,
                                    std::optional<std::int32_t> iteration = std::nullopt);

}  // namespace recycle::sim
