#include "tools/whole_range.hpp"

#include <charconv>

#include "core/error.hpp"

namespace recycle::tools {

CLI::Validator whole_range(std::int64_t lo, std::int64_t hi) {
  const std::string expected =
      "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, expected](std::string& text) -> std::string {
        std::int64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [at, error] = std::from_chars(text.data(), end, value);
        const bool digits = !text.empty() && text.front() != '+' && at == end;
        if (!digits || error != std::errc{} || value < lo || value > hi) {
          return expected + ", got '" + shown(text) + "'";
        }
        return {};
      },
      "INT in [" + std::to_string(lo) + " - " + std::to_string(hi) + "]");
}

}  // namespace recycle::tools
