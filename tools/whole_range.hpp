// The check of every whole-number flag: a plain decimal number (an optional minus sign and digits,
// nothing else), then its range. CLI11's own Range converts first, so "2 ", "2.0" and "0x2" were
// either read as something else or refused as out of range.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace recycle::tools {

/// Accepts the decimal whole numbers from `lo` to `hi`; anything else gets
/// "expected a whole number from LO to HI, got 'TEXT'".
[[nodiscard]] CLI::Validator whole_range(std::int64_t lo, std::int64_t hi);

}  // namespace recycle::tools
