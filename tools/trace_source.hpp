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
  bool seed_given = false;

  /// Adds --trace (described by `trace_help`), --from, --map (`map_help`) and --seed; returns the
  /// --trace option.
  CLI::Option* add_to(CLI::App& app, const std::string& trace_help, const std::string& map_help);
  /// Reads the trace in its format, logging what the importer noted.
  [[nodiscard]] traces::LoadedTrace load() const;
  /// --map and --seed, for a cluster of `nodes` nodes; nullopt without --map. InputError naming
  /// --seed where it would be ignored (require_seed_draws).
  [[nodiscard]] std::optional<traces::MapOptions> mapping(std::int64_t nodes) const;
};

/// A --seed value: an integer >= 0; InputError naming --seed otherwise.
[[nodiscard]] std::uint64_t seed_value(const std::string& text);
/// Only --map sample and scale draw at random: InputError naming --seed when one was given with
/// no mapping (`mode` nullopt) or with wrap, where it would be ignored.
void require_seed_draws(bool seed_given, std::optional<traces::MapMode> mode);

}  // namespace recycle::tools
