// The native trace file: CSV with the header `time_s,node,event,cause`, one event a line, sorted by
// time. `time_s` is seconds since the start of the observation (resolution 1 µs), `node` an integer
// id or a name, `event` `down` or `up`, `cause` free text (may be empty; quote it if it holds a
// comma). Before the header, `# nodes: N` and `# duration_s: S` declare how many nodes were watched
// and for how long; other `#` lines are comments kept with the trace. docs/traces.md has the
// details.
#pragma once

#include <cstddef>
#include <string>

#include "traces/import.hpp"
#include "traces/trace.hpp"

namespace recycle::traces {

/// The most a native trace file may hold, read or written: 4 GiB. A trace at the event limit
/// (kMaxEvents) takes about 25 bytes an event with numbered nodes and no causes (1.2 GB for 48
/// million), more with names and causes: above the 1 GiB other text files may hold, and written
/// files past it are refused, so that every trace the tool writes reads back.
inline constexpr std::size_t kMaxTraceFileBytes = std::size_t{4} << 30;

/// The native header line.
inline constexpr std::string_view kNativeHeader = "time_s,node,event,cause";

/// Parses native CSV text; `source` names it in errors (`source:line: what`).
[[nodiscard]] LoadedTrace parse_native_csv(const std::string& text, const std::string& source,
                                           const ImportOptions& options);
[[nodiscard]] LoadedTrace read_native_csv(const std::string& path, const ImportOptions& options);

/// Refuses with InputError(where, "WHAT 'TEXT' is blank or holds a control character, ...") a node
/// name (`may_be_empty` false) or a cause (true) that a native file cannot hold so that it reads
/// back. Importers call it to name the record; the writer checks every name and cause again.
void require_writable(std::string_view text, const std::string& where, std::string_view what,
                      bool may_be_empty);

/// The native CSV text of a trace: comments, declarations, header, events. Deterministic.
[[nodiscard]] std::string format_native_csv(const Trace& trace);
/// Writes the native CSV atomically ("-": stdout); InputError naming `path` when it would take
/// more than `max_bytes` (what read_native_csv reads).
void write_native_csv(const Trace& trace, const std::string& path,
                      std::size_t max_bytes = kMaxTraceFileBytes);

}  // namespace recycle::traces
