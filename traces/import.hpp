// Reading traces from files: the native CSV and the formats of published traces. Every reader takes
// the same options and returns the trace with what a lenient read repaired.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/units.hpp"
#include "traces/trace.hpp"

namespace recycle::traces {

struct ImportOptions {
  bool lenient = false;    ///< drop events that break the down/up alternation, and count them
  std::int64_t nodes = 0;  ///< nodes watched, when more than the trace names (0: from the file)
  Nanos duration =
      -1;  ///< length of the observation, when longer than the last event (-1: from the file)
};

/// Declares the options' node count and duration on a builder, naming the flags in errors.
void apply_declarations(const ImportOptions& options, TraceBuilder& builder);

enum class ImportFormat {
  kNative,       ///< recycle's CSV: time_s,node,event,cause (native_csv.hpp)
  kInfiniteHbd,  ///< StepFun InfiniteHBD fault_trace.json (import_infinitehbd.hpp)
  kBamboo,       ///< Bamboo / Oobleck spot traces: delta_ms,add|remove,nodeN (import_bamboo.hpp)
  kSimGrid,      ///< SimGrid state profiles, one file per node or a directory (import_simgrid.hpp)
};

/// "csv", "infinitehbd", "bamboo" or "simgrid"; `where` names the flag in errors.
[[nodiscard]] ImportFormat parse_import_format(std::string_view name, const std::string& where);

/// Reads `path` (a file, or for SimGrid a file or a directory) in `format`.
[[nodiscard]] LoadedTrace import_trace(ImportFormat format, const std::string& path,
                                       const ImportOptions& options);

}  // namespace recycle::traces
