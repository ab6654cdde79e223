// Importer for the spot-instance traces of Bamboo (NSDI '23, github.com/uclasystem/bamboo), also
// used by Oobleck (SOSP '23): no header, one `delta_ms,add|remove,nodeN` row per event, sorted by
// delta_ms (milliseconds since the start).
//
// Mapping: a spot instance never comes back once preempted (every name is one instance lifetime),
// so instances are packed into slots, and a slot is a node: `add` puts the instance in the lowest
// free slot, `remove` frees its slot. The trace has as many nodes as instances ran at once at most.
// remove -> down (cause "spot preemption"); add into a slot at time > 0 -> up; a slot first filled
// after time 0 starts down (a `down` at time 0, cause "spot capacity not yet obtained").
#pragma once

#include <string>

#include "traces/import.hpp"

namespace recycle::traces {

[[nodiscard]] LoadedTrace parse_bamboo(const std::string& text, const std::string& source,
                                       const ImportOptions& options);
[[nodiscard]] LoadedTrace read_bamboo(const std::string& path, const ImportOptions& options);

}  // namespace recycle::traces
