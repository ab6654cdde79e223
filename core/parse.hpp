// Strict parsing of numbers and lists from text (flags, CSV cells). Every function takes `where`
// (a flag name or "file:line") and throws InputError naming it when the text is not what was
// expected: no silent truncation ("12abc"), no NaN, no overflow.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.hpp"

namespace recycle {

[[nodiscard]] std::int64_t parse_int(std::string_view text, const std::string& where);
[[nodiscard]] double parse_double(std::string_view text, const std::string& where);

/// `seconds` (> 0, as given in `text`) in simulated time, rounded to the nanosecond (to_nanos).
/// InputError naming `where` when it rounds to 0 ns: simulated time counts whole nanoseconds, so
/// such a time (an iteration, a checkpoint interval) would take none.
[[nodiscard]] Nanos positive_nanos(double seconds, std::string_view text, const std::string& where);

/// Splits on `sep`, keeping empty fields ("a,,b" -> {"a", "", "b"}).
[[nodiscard]] std::vector<std::string_view> split(std::string_view text, char sep);

[[nodiscard]] std::string_view trim(std::string_view text) noexcept;

/// `text` without the UTF-8 byte order mark (EF BB BF) some editors put at the start of a file.
[[nodiscard]] std::string_view without_byte_order_mark(std::string_view text) noexcept;

}  // namespace recycle
