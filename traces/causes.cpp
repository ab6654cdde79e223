#include "traces/causes.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/parse.hpp"
#include "traces/native_csv.hpp"

namespace recycle::traces {

namespace {

struct Preset {
  std::string_view name;
  std::vector<CauseShare> shares;
};

const std::vector<Preset>& presets() {
  static const std::vector<Preset> kPresets = {
      {"none", {}},
      // Dubey et al. 2024, Table 5: interruption counts (they sum to 419). The table prints 30.1 %
      // for "Faulty GPU" although 148 / 419 = 35.3 %; the counts are used.
      {"llama3",
       {{"GPU / Faulty GPU", 148},
        {"GPU / GPU HBM3 Memory", 72},
        {"Dependency / Software Bug", 54},
        {"Network / Network Switch/Cable", 35},
        {"Unplanned Maintenance / Host Maintenance", 32},
        {"GPU / GPU SRAM Memory", 19},
        {"GPU / GPU System Processor", 17},
        {"Host / NIC", 7},
        {"Unknown / NCCL Watchdog Timeouts", 7},
        {"GPU / Silent Data Corruption", 6},
        {"GPU / GPU Thermal Interface + Sensor", 6},
        {"Host / SSD", 3},
        {"Host / Power Supply", 3},
        {"Host / Server Chassis", 2},
        {"Host / IO Expansion Board", 2},
        {"Dependency / Dependency", 2},
        {"Host / CPU", 2},
        {"Host / System Memory", 2}}},
      // InfiniteHBD fault_statistics.json, ClassTotal per Level / Class (they sum to 584).
      {"infinitehbd",
       {{"Hardware Failure / GPU", 158},
        {"Other Failure / Unknown Error", 144},
        {"Other Failure / Stress Test Failure", 97},
        {"Hardware Failure / Parameter Plane Cable", 40},
        {"Hardware Failure / Fan", 33},
        {"Hardware Failure / NIC", 30},
        {"Hardware Failure / Power Supply", 26},
        {"Other Failure / Training Task Troubleshooting", 14},
        {"Software Failure / Other Failures", 12},
        {"Software Failure / Software Tool", 7},
        {"Hardware Failure / Motherboard", 4},
        {"Other Failure / Change", 4},
        {"Hardware Failure / CPU", 3},
        {"Software Failure / File System", 3},
        {"Other Failure / Test", 2},
        {"Hardware Failure / Motherboard Battery", 1},
        {"Hardware Failure / Other Failures", 1},
        {"Hardware Failure / RAID Card", 1},
        {"Hardware Failure / Riser Card", 1},
        {"Other Failure / System Crash", 1},
        {"Software Failure / Firmware", 1},
        {"Software Failure / Operating System", 1}}},
  };
  return kPresets;
}

}  // namespace

CauseMix::CauseMix(std::string spec, std::vector<CauseShare> shares)
    : spec_(std::move(spec)), shares_(std::move(shares)) {
  double total = 0;
  for (const CauseShare& share : shares_) cumulative_.push_back(total += share.weight);
}

CauseMix CauseMix::parse(std::string_view spec, const std::string& where) {
  const std::string_view t = trim(spec);
  for (const Preset& preset : presets()) {
    if (preset.name == t) return CauseMix(std::string(t), preset.shares);
  }
  if (t.find(':') == std::string_view::npos) {
    std::string names;
    for (const std::string_view name : cause_preset_names())
      names += std::string(names.empty() ? "" : ", ") + std::string(name);
    throw InputError(where, "unknown cause mix '" + shown(t) + "', expected " + names +
                                " or NAME:WEIGHT,NAME:WEIGHT,...");
  }
  std::vector<CauseShare> shares;
  for (const std::string_view item : split(t, ',')) {
    const auto colon = item.rfind(':');
    const std::string_view name =
        trim(item.substr(0, colon == std::string_view::npos ? item.size() : colon));
    if (colon == std::string_view::npos || name.empty()) {
      throw InputError(where, "expected NAME:WEIGHT, got '" + shown(trim(item)) + "'");
    }
    const double weight = parse_double(item.substr(colon + 1), where);
    if (weight <= 0) throw InputError(where, "cause weights must be > 0");
    require_writable(name, where, "cause", false);
    shares.push_back({std::string(name), weight});
  }
  return CauseMix(std::string(t), std::move(shares));
}

std::size_t CauseMix::draw(Rng& rng) const {
  RECYCLE_ASSERT(!shares_.empty(), "draw() from an empty cause mix");
  const double x = rng.uniform() * cumulative_.back();
  const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), x);
  return std::min<std::size_t>(static_cast<std::size_t>(it - cumulative_.begin()),
                               shares_.size() - 1);
}

std::vector<std::string_view> cause_preset_names() {
  std::vector<std::string_view> names;
  for (const Preset& preset : presets()) names.push_back(preset.name);
  return names;
}

}  // namespace recycle::traces
