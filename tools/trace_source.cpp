#include "tools/trace_source.hpp"

#include <spdlog/spdlog.h>

#include "core/error.hpp"
#include "core/parse.hpp"

namespace recycle::tools {

CLI::Option* TraceSource::add_to(CLI::App& app, const std::string& trace_help,
                                 const std::string& map_help) {
  CLI::Option* trace = app.add_option("--trace", path, trace_help);
  app.add_option("--from", from, "Trace format: csv, infinitehbd, bamboo, simgrid (default csv)");
  app.add_option("--map", map, map_help);
  app.add_option("--seed", seed, "Seed for --map sample and scale (default 0)")
      ->each([this](const std::string&) { seed_given = true; });
  return trace;
}

traces::LoadedTrace TraceSource::load() const {
  traces::LoadedTrace loaded = traces::import_trace(traces::parse_import_format(from, "--from"),
                                                    path, traces::ImportOptions{});
  for (const std::string& note : loaded.notes) spdlog::info("{}: {}", path, note);
  return loaded;
}

std::optional<traces::MapOptions> TraceSource::mapping(std::int64_t nodes) const {
  if (map.empty()) {
    require_seed_draws(seed_given, std::nullopt);
    return std::nullopt;
  }
  const traces::MapMode mode = traces::parse_map_mode(map, "--map");
  require_seed_draws(seed_given, mode);
  return traces::MapOptions{mode, nodes, seed_value(seed)};
}

void require_seed_draws(bool seed_given, std::optional<traces::MapMode> mode) {
  if (!seed_given || (mode && *mode != traces::MapMode::kWrap)) return;
  throw InputError("--seed", mode ? "--map wrap draws nothing at random: give --seed with "
                                    "--map sample or scale"
                                  : "needs --map sample or scale (nothing else draws at random)");
}

std::uint64_t seed_value(const std::string& text) {
  const std::int64_t seed = parse_int(text, "--seed");
  if (seed < 0) throw InputError("--seed", "must be >= 0, got " + text);
  return static_cast<std::uint64_t>(seed);
}

}  // namespace recycle::tools
