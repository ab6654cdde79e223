#include "traces/native_csv.hpp"

#include <algorithm>
#include <optional>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/parse.hpp"
#include "traces/text_lines.hpp"

namespace recycle::traces {

namespace {

constexpr std::string_view kNodesKey = "nodes";
constexpr std::string_view kDurationKey = "duration_s";

/// What precedes the header: declarations and comments, and the header's line number.
struct Preamble {
  std::size_t header_line = 0;  ///< 0: the text has no header line
  std::size_t last_line = 0;
};

/// `# key: value` with a known key, or nullopt.
std::optional<std::pair<std::string_view, std::string_view>> declaration(std::string_view comment) {
  const auto colon = comment.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view key = trim(comment.substr(0, colon));
  if (key != kNodesKey && key != kDurationKey) return std::nullopt;
  return std::pair{key, trim(comment.substr(colon + 1))};
}

Preamble read_preamble(const std::string& text, const std::string& source, TraceBuilder& builder) {
  Preamble preamble;
  for_each_line(text, [&](std::size_t number, std::string_view line) {
    preamble.last_line = number;
    const std::string_view content = trim(line);
    if (content.empty()) return true;
    if (content.front() != '#') {
      preamble.header_line = number;
      return false;
    }
    const std::string_view comment = trim(content.substr(1));
    const std::string where = source + ":" + std::to_string(number);
    const auto decl = declaration(comment);
    if (!decl) {
      builder.add_comment(std::string(comment));
    } else if (decl->first == kNodesKey) {
      const std::int64_t nodes = parse_int(decl->second, where);
      if (nodes < 1 || nodes > kMaxNodes) {
        throw InputError(where, "nodes must be in [1, " + std::to_string(kMaxNodes) + "]");
      }
      builder.set_node_count(nodes, where);
    } else {
      const double seconds = parse_double(decl->second, where);
      if (seconds < 0 || seconds > to_seconds(kMaxTime)) {
        throw InputError(where, "duration_s must be in [0, 1e9]");
      }
      builder.set_duration(seconds_to_trace_time(seconds), where);
    }
    return true;
  });
  return preamble;
}

/// A node id as the native format writes numbered nodes: digits, no leading zero, below kMaxNodes.
bool is_node_number(std::string_view cell) {
  const std::string_view t = trim(cell);
  if (t.empty() || t.size() > 8 || (t.size() > 1 && t.front() == '0')) return false;
  if (!std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  return std::stoll(std::string(t)) < kMaxNodes;
}

/// Nodes are numbered when every node cell is a node number.
bool all_nodes_numbered(const std::vector<CsvRow>& rows) {
  return std::all_of(rows.begin() + 1, rows.end(), [](const CsvRow& row) {
    return row.fields.size() < 2 || is_node_number(row.fields[1]);
  });
}

EventKind parse_event(std::string_view cell, const std::string& where) {
  const std::string_view t = trim(cell);
  if (t == "down") return EventKind::kDown;
  if (t == "up") return EventKind::kUp;
  throw InputError(where, "unknown event '" + std::string(t) + "', expected down or up");
}

}  // namespace

LoadedTrace parse_native_csv(const std::string& text, const std::string& source,
                             const ImportOptions& options) {
  require_text(text, source);
  // Naming is decided from all rows, so the builder is made after a first look at them.
  std::vector<CsvRow> rows = parse_csv(text, source);
  TraceBuilder builder(
      all_nodes_numbered(rows) ? TraceBuilder::Naming::kNumbered : TraceBuilder::Naming::kNamed,
      options.lenient);
  const Preamble preamble = read_preamble(text, source, builder);
  if (preamble.header_line == 0) {
    const std::string where = source + ":" + std::to_string(preamble.last_line + 1);
    throw InputError(where, std::string(text.empty() ? "empty file" : "no header") +
                                ", expected the header " + std::string(kNativeHeader));
  }
  const CsvRow& header = rows.front();
  const std::vector<std::string> expected = {"time_s", "node", "event", "cause"};
  std::vector<std::string> got;
  for (const auto& field : header.fields) got.emplace_back(trim(field));
  if (got != expected) {
    throw InputError(header.where(source), "expected the header " + std::string(kNativeHeader));
  }
  const bool numbered = all_nodes_numbered(rows);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const CsvRow& row = rows[i];
    const std::string where = row.where(source);
    if (row.fields.size() != 4) {
      throw InputError(where, "expected 4 columns (" + std::string(kNativeHeader) + "), got " +
                                  std::to_string(row.fields.size()));
    }
    const double seconds = parse_double(row.fields[0], where);
    if (seconds < 0 || seconds > to_seconds(kMaxTime)) {
      throw InputError(where,
                       "time_s must be in [0, 1e9], got " + std::string(trim(row.fields[0])));
    }
    const std::string_view node_cell = trim(row.fields[1]);
    if (node_cell.empty()) throw InputError(where, "empty node");
    const NodeId node =
        numbered ? static_cast<NodeId>(parse_int(node_cell, where)) : builder.named_node(node_cell);
    const EventKind kind = parse_event(row.fields[2], where);
    builder.add(seconds_to_trace_time(seconds), node, kind, builder.cause(trim(row.fields[3])),
                source, row.line);
  }
  apply_declarations(options, builder);
  return std::move(builder).finish();
}

LoadedTrace read_native_csv(const std::string& path, const ImportOptions& options) {
  return parse_native_csv(read_text_file(path), path, options);
}

std::string format_native_csv(const Trace& trace) {
  std::string out;
  out.reserve(64 + trace.events().size() * 32);
  for (const std::string& comment : trace.comments()) out += "# " + comment + "\n";
  out += "# " + std::string(kNodesKey) + ": " + std::to_string(trace.node_count()) + "\n";
  out += "# " + std::string(kDurationKey) + ": " + format_seconds(trace.duration()) + "\n";
  out += kNativeHeader;
  out += '\n';
  for (const Event& event : trace.events()) {
    out += format_seconds(event.time);
    out += ',';
    out += csv_escape(trace.node_name(event.node));
    out += ',';
    out += to_string(event.kind);
    out += ',';
    out += csv_escape(trace.cause(event.cause));
    out += '\n';
  }
  return out;
}

void write_native_csv(const Trace& trace, const std::string& path) {
  write_text_file(path, format_native_csv(trace));
}

}  // namespace recycle::traces
