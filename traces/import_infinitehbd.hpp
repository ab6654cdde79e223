// Importer for the StepFun InfiniteHBD fault trace (github.com/stepfun-ai/InfiniteHBD-Trace): a
// JSON array of {node_id, event_time (days), event_type: fault_start|fault_end, fault_type: {Level,
// Class, Desc}}.
//
// Mapping: node_id -> a named node; event_time x 86,400 -> time_s; fault_start -> down with the
// cause "Level / Class / Desc"; fault_end -> up. A server can carry several faults at once: it is
// down from the first fault_start until its open faults have all ended, so a fault that starts
// while its node is already down is merged into that outage (and said so in a note).
#pragma once

#include <string>

#include "traces/import.hpp"

namespace recycle::traces {

[[nodiscard]] LoadedTrace parse_infinitehbd(const std::string& text, const std::string& source,
                                            const ImportOptions& options);
[[nodiscard]] LoadedTrace read_infinitehbd(const std::string& path, const ImportOptions& options);

}  // namespace recycle::traces
