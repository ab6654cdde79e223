// Importer for SimGrid state profiles (simgrid.org, kernel/resource/profile): one file per node,
// `date value` lines (date in seconds, sorted; value 0 = off, 1 = on), `#` and `%` comments, and
// optionally `LOOPAFTER delay` (the pattern starts again `delay` seconds after its last line) or
// `PERIODICITY period` (it starts again every `period` seconds).
//
// Mapping: each file is a node named after the file (without its extension); a node starts up;
// value 0 while up -> down, value 1 while down -> up, a value equal to the current state -> nothing
// (SimGrid sets the state, it does not toggle it). A looping profile is unrolled until the end of
// the observation, which must then be given (ImportOptions::duration, `--days`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/import.hpp"

namespace recycle::traces {

/// A looping profile, unrolled, may repeat at most kMaxProfilePeriods times, and its repetitions
/// may not take it past kMaxProfileChanges state changes (a node that flips every 2.6 s for 30
/// days): the one place where a few bytes become many events. The trace as a whole is bounded by
/// kMaxEvents.
inline constexpr std::int64_t kMaxProfilePeriods = 1'000'000;
inline constexpr std::int64_t kMaxProfileChanges = 1'000'000;

struct SimGridProfile {
  std::string node;    ///< the node's name
  std::string source;  ///< names the profile in errors (a path)
  std::string text;
};

/// Merges the profiles' events into one trace, nodes in the order given.
[[nodiscard]] LoadedTrace parse_simgrid(const std::vector<SimGridProfile>& profiles,
                                        const ImportOptions& options);
/// `path` is one profile file, or a directory whose files (sorted by name; hidden ones skipped)
/// are.
[[nodiscard]] LoadedTrace read_simgrid(const std::string& path, const ImportOptions& options);

}  // namespace recycle::traces
