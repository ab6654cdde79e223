#include "core/parse.hpp"

#include <charconv>
#include <cmath>

#include "core/error.hpp"

namespace recycle {

std::string_view trim(std::string_view text) noexcept {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::int64_t parse_int(std::string_view text, const std::string& where) {
  const std::string_view t = trim(text);
  std::int64_t value = 0;
  const auto* begin = t.data();
  const auto* end = t.data() + t.size();
  if (!t.empty() && *begin == '+') ++begin;
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (t.empty() || ec == std::errc::result_out_of_range) {
    throw InputError(where, "expected an integer, got '" + shown(t) + "'");
  }
  if (ec != std::errc() || ptr != end) {
    throw InputError(where, "expected an integer, got '" + shown(t) + "'");
  }
  return value;
}

double parse_double(std::string_view text, const std::string& where) {
  const std::string_view t = trim(text);
  double value = 0;
  const auto* begin = t.data();
  const auto* end = t.data() + t.size();
  if (!t.empty() && *begin == '+') ++begin;
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (t.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) {
    throw InputError(where, "expected a number, got '" + shown(t) + "'");
  }
  return value;
}

Nanos positive_nanos(double seconds, std::string_view text, const std::string& where) {
  const Nanos ns = to_nanos(seconds);
  if (ns <= 0) {
    throw InputError(where, "'" + shown(trim(text)) +
                                "' seconds rounds to 0 ns: simulated time counts whole "
                                "nanoseconds, so a time > 0 must round to at least 1 ns");
  }
  return ns;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const auto pos = text.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string_view without_byte_order_mark(std::string_view text) noexcept {
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  if (text.starts_with(kByteOrderMark)) text.remove_prefix(kByteOrderMark.size());
  return text;
}

}  // namespace recycle
