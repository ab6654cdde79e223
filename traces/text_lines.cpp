#include "traces/text_lines.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"

namespace recycle::traces {

void for_each_line(std::string_view text,
                   const std::function<bool(std::size_t, std::string_view)>& visit) {
  std::size_t number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = end + 1;
    if (!visit(++number, line)) return;
  }
}

void require_text(std::string_view text, const std::string& source) {
  const auto is_binary = [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && c != '\t' && c != '\n' && c != '\r') || byte == 0x7F;
  };
  const auto where = [&](std::size_t i) {
    return source + ":" +
           std::to_string(
               1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(i), '\n'));
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')) {
      throw InputError(where(i),
                       "a carriage return not followed by a line feed: the file uses CR line "
                       "endings (classic Mac), expected LF or CRLF");
    }
    if (!is_binary(text[i])) continue;
    throw InputError(where(i), fmt::format("binary content (byte 0x{:02X}), expected a text file",
                                           static_cast<unsigned char>(text[i])));
  }
}

}  // namespace recycle::traces
