// Reading CSV input: one record per line, comma-separated, RFC 4180 double quotes for fields that
// hold commas. Blank lines and lines starting with '#' are skipped. Every row remembers its line
// number so a caller's error reads `file:line: what`.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace recycle {

struct CsvRow {
  std::size_t line = 0;  /// 1-based line number in the source
  std::vector<std::string> fields;
  /// Per field: whether it was written in double quotes (a reader may take such a field verbatim).
  std::vector<bool> quoted;

  /// "file:line", for InputError.
  [[nodiscard]] std::string where(const std::string& source) const {
    return source + ":" + std::to_string(line);
  }
};

/// Parses CSV text; `source` names it in errors (unterminated quote).
[[nodiscard]] std::vector<CsvRow> parse_csv(const std::string& text, const std::string& source);

/// The same records in order, handed one at a time to `visit` in one reused row, so that reading
/// holds one record, not all of them (a trace of 50 million events); `visit` returns false to
/// stop.
void for_each_csv_row(const std::string& text, const std::string& source,
                      const std::function<bool(const CsvRow&)>& visit);

/// Quotes a field if it holds a comma, quote or newline.
[[nodiscard]] std::string csv_escape(const std::string& field);
/// Quotes a field whatever it holds (RFC 4180: quotes inside are doubled).
[[nodiscard]] std::string csv_quote(const std::string& field);

}  // namespace recycle
