// The flags that name a failure trace to replay and how its nodes become a cluster's, shared by
// `recycle replay` and `recycle study`: --trace FILE, --from FORMAT, --map MODE, --seed N.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "traces/import.hpp"
#include "traces/mapping.hpp"

namespace recycle::tools {

struct TraceSource {
  std::string path;
  std::string from = "csv";
  std::string map;
  std::string seed = "0";

  /// Adds --trace (described by `trace_help`), --from, --map (`map_help`) and --seed; returns the
  /// --trace option.
  CLI::Option* add_to(CLI::App& app, const std::string& trace_help, const std::string& map_help);
  /// Reads the trace in its format, logging what the importer noted.
  [[nodiscard]] traces::LoadedTrace load() const;
  /// --map and --seed, for a cluster of `nodes` nodes; nullopt without --map.
  [[nodiscard]] std::optional<traces::MapOptions> mapping(std::int64_t nodes) const;
};

/// A --seed value: an integer >= 0; InputError naming --seed otherwise.
[[nodiscard]] std::uint64_t seed_value(const std::string& text);

}  // namespace recycle::tools
