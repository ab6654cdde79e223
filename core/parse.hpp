// Strict parsing of numbers and lists from text (flags, CSV cells). Every function takes `where`
// (a flag name or "file:line") and throws InputError naming it when the text is not what was
// expected: no silent truncation ("12abc"), no NaN, no overflow.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace recycle {

[[nodiscard]] std::int64_t parse_int(std::string_view text, const std::string& where);
[[nodiscard]] double parse_double(std::string_view text, const std::string& where);

/// Splits on `sep`, keeping empty fields ("a,,b" -> {"a", "", "b"}).
[[nodiscard]] std::vector<std::string_view> split(std::string_view text, char sep);

[[nodiscard]] std::string_view trim(std::string_view text) noexcept;

}  // namespace recycle
