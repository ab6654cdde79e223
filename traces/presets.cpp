#include "traces/presets.hpp"

#include "core/error.hpp"

namespace recycle::traces {

namespace {

/// Fitted to the InfiniteHBD trace (docs/traces.md, "Presets"): the Weibull shape of the time
/// between failure instants, and bursts (1.10 nodes per failure instant on average). Repair times
/// keep the generator's default, the lognormal fitted to the same trace.
constexpr double kInfiniteHbdShape = 0.62;
const BurstModel kInfiniteHbdBurst{0.05, 2};

GeneratorOptions options(std::string_view name, std::int64_t nodes, double days, double rate,
                         const BurstModel& burst, std::string_view causes) {
  GeneratorOptions o;
  o.preset = std::string(name);
  o.nodes = nodes;
  o.days = days;
  o.rate = rate;
  o.tbf = {TbfModel::Kind::kWeibull, kInfiniteHbdShape};
  o.burst = burst;
  o.causes = CauseMix::parse(causes, "preset");
  return o;
}

}  // namespace

const std::vector<GeneratorPreset>& generator_presets() {
  // Llama 3: 419 unexpected interruptions in 54 days on 16,384 GPUs = 2,048 nodes of 8 GPUs.
  constexpr double kLlama3Rate = 419.0 / (2048.0 * 54.0) * 1000.0;
  static const std::vector<GeneratorPreset> kPresets = {
      {"llama3-like",
       "2,048 nodes, 54 days at the Llama 3 rate (3.79 per 1,000 node-days) and causes",
       options("llama3-like", 2048, 54, kLlama3Rate, BurstModel{}, "llama3")},
      {"cloud-bad", "2,048 nodes, 30 days at 15 per 1,000 node-days, bursty, Llama 3 causes",
       options("cloud-bad", 2048, 30, 15, kInfiniteHbdBurst, "llama3")},
      {"infinitehbd-like",
       "400 nodes, 348 days shaped like the InfiniteHBD trace (4.18 per 1,000 node-days)",
       options("infinitehbd-like", 400, 348, 4.18, kInfiniteHbdBurst, "infinitehbd")},
  };
  return kPresets;
}

const GeneratorPreset& find_generator_preset(std::string_view name, const std::string& where) {
  std::string names;
  for (const GeneratorPreset& preset : generator_presets()) {
    if (preset.name == name) return preset;
    names += (names.empty() ? "" : ", ") + std::string(preset.name);
  }
  throw InputError(where, "unknown preset '" + std::string(name) + "', expected " + names);
}

}  // namespace recycle::traces
