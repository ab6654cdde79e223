#include "core/csv.hpp"

#include "core/error.hpp"

namespace recycle {

namespace {

bool skip_line(const std::string& line) {
  for (const char c : line) {
    if (c == '#') return true;
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;  // blank
}

void split_record(const std::string& line, const std::string& source, CsvRow& row) {
  std::vector<std::string>& fields = row.fields;
  fields.resize(1);
  fields.front().clear();
  row.quoted.assign(1, false);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"' && fields.back().empty()) {
      quoted = true;
      row.quoted.back() = true;
    } else if (c == ',') {
      fields.emplace_back();
      row.quoted.push_back(false);
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  if (quoted) throw InputError(row.where(source), "unterminated quoted field");
}

}  // namespace

void for_each_csv_row(const std::string& text, const std::string& source,
                      const std::function<bool(const CsvRow&)>& visit) {
  CsvRow row;
  std::string line;
  std::size_t line_no = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    ++line_no;
    line.assign(text, start, end - start);
    start = end + 1;
    if (skip_line(line)) continue;
    row.line = line_no;
    split_record(line, source, row);
    if (!visit(row)) return;
  }
}

std::vector<CsvRow> parse_csv(const std::string& text, const std::string& source) {
  std::vector<CsvRow> rows;
  for_each_csv_row(text, source, [&](const CsvRow& row) {
    rows.push_back(row);
    return true;
  });
  return rows;
}

std::string csv_escape(const std::string& field) {
  if (field.find_first_of(",\"\n") == std::string::npos) return field;
  return csv_quote(field);
}

std::string csv_quote(const std::string& field) {
  std::string out = "\"";
  for (const char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace recycle
