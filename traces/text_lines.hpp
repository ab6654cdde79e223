// Helpers for the line-oriented trace formats (native CSV, Bamboo, SimGrid): walking lines with
// their numbers, and refusing binary content with the line it is on.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "core/parse.hpp"  // without_byte_order_mark

namespace recycle::traces {

/// Calls `visit(line_number, line)` for every line (1-based, without the '\n' or a trailing '\r')
/// until it returns false.
void for_each_line(std::string_view text,
                   const std::function<bool(std::size_t, std::string_view)>& visit);

/// Throws InputError("source:line", ...) at the first control byte other than tab, CR and LF:
/// binary content (NUL bytes are already refused by read_text_file); and at a CR that no LF
/// follows: the file uses CR line endings, which would read as one long line.
void require_text(std::string_view text, const std::string& source);

}  // namespace recycle::traces
