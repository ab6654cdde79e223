#include "traces/import.hpp"

#include "core/error.hpp"
#include "traces/import_bamboo.hpp"
#include "traces/import_infinitehbd.hpp"
#include "traces/import_simgrid.hpp"
#include "traces/native_csv.hpp"

namespace recycle::traces {

void apply_declarations(const ImportOptions& options, TraceBuilder& builder) {
  if (options.nodes > 0) builder.set_node_count(options.nodes, "--nodes");
  if (options.duration >= 0) builder.set_duration(options.duration, "--days");
}

ImportFormat parse_import_format(std::string_view name, const std::string& where) {
  if (name == "csv") return ImportFormat::kNative;
  if (name == "infinitehbd") return ImportFormat::kInfiniteHbd;
  if (name == "bamboo") return ImportFormat::kBamboo;
  if (name == "simgrid") return ImportFormat::kSimGrid;
  throw InputError(where, "unknown format '" + std::string(name) +
                              "', expected csv, infinitehbd, bamboo or simgrid");
}

LoadedTrace import_trace(ImportFormat format, const std::string& path,
                         const ImportOptions& options) {
  switch (format) {
    case ImportFormat::kNative:
      return read_native_csv(path, options);
    case ImportFormat::kInfiniteHbd:
      return read_infinitehbd(path, options);
    case ImportFormat::kBamboo:
      return read_bamboo(path, options);
    case ImportFormat::kSimGrid:
      return read_simgrid(path, options);
  }
  RECYCLE_ASSERT(false, "unhandled import format");
}

}  // namespace recycle::traces
