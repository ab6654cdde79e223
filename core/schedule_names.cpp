#include "core/schedule_names.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace recycle {

const std::vector<std::string>& fault_free_generator_names() {
  static const std::vector<std::string> names = {"gpipe", "1f1b", "interleaved", "zb-h1",
                                                 "zb-h2", "zb-v", "dualpipe-v",  "2bw"};
  return names;
}

std::string_view canonical_schedule_name(std::string_view name) noexcept {
  return name == "pipedream-flush" ? std::string_view("1f1b") : name;
}

const std::vector<std::string>& schedule_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out = fault_free_generator_names();
    out.emplace_back("recycle");
    return out;
  }();
  return names;
}

bool is_schedule_name(std::string_view name, const std::vector<std::string>& names) {
  return std::find(names.begin(), names.end(), canonical_schedule_name(name)) != names.end();
}

std::string unknown_schedule_message(std::string_view name, const std::vector<std::string>& names) {
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  return "unknown schedule '" + shown(std::string(name)) + "', expected one of " + known;
}

}  // namespace recycle
