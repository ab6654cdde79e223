#include "traces/native_csv.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/parse.hpp"
#include "traces/text_lines.hpp"

namespace recycle::traces {

namespace {

constexpr std::string_view kNodesKey = "nodes";
constexpr std::string_view kDurationKey = "duration_s";

/// What precedes the header: declarations, comments, and where the header is.
struct Preamble {
  std::vector<std::string> comments;
  std::int64_t nodes = 0;  ///< 0: not declared
  std::string nodes_where;
  std::size_t nodes_line = 0;
  Nanos duration = -1;  ///< -1: not declared
  std::string duration_where;
  std::size_t duration_line = 0;
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

/// A declaration may be repeated with the same value, not with another: which one would hold?
void require_same(std::string_view key, const std::string& value, std::size_t earlier_line,
                  const std::string& earlier, const std::string& where) {
  if (earlier_line == 0 || value == earlier) return;
  throw InputError(where, std::string(key) + " declared again as " + value + ", but line " +
                              std::to_string(earlier_line) + " declares " + earlier);
}

Preamble read_preamble(const std::string& text, const std::string& source) {
  Preamble p;
  for_each_line(text, [&](std::size_t number, std::string_view line) {
    p.last_line = number;
    const std::string_view content = trim(line);
    if (content.empty()) return true;
    if (content.front() != '#') {
      p.header_line = number;
      return false;
    }
    const std::string_view comment = trim(content.substr(1));
    const std::string where = source + ":" + std::to_string(number);
    const auto decl = declaration(comment);
    if (!decl) {
      p.comments.emplace_back(comment);
    } else if (decl->first == kNodesKey) {
      const std::int64_t nodes = parse_int(decl->second, where);
      if (nodes < 1 || nodes > kMaxNodes) {
        throw InputError(where, "nodes must be in [1, " + std::to_string(kMaxNodes) + "]");
      }
      require_same(kNodesKey, std::to_string(nodes), p.nodes_line, std::to_string(p.nodes), where);
      if (p.nodes_line == 0) {
        p.nodes = nodes;
        p.nodes_where = where;
        p.nodes_line = number;
      }
    } else {
      const Nanos duration = read_seconds(decl->second, where, kDurationKey);
      require_same(kDurationKey, format_seconds(duration), p.duration_line,
                   format_seconds(p.duration), where);
      if (p.duration_line == 0) {
        p.duration = duration;
        p.duration_where = where;
        p.duration_line = number;
      }
    }
    return true;
  });
  return p;
}

/// A node id as the native format writes numbered nodes: digits, no leading zero, below kMaxNodes.
bool is_node_number(std::string_view cell) {
  const std::string_view t = trim(cell);
  if (t.empty() || t.size() > 8 || (t.size() > 1 && t.front() == '0')) return false;
  if (!std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  return std::stoll(std::string(t)) < kMaxNodes;
}

/// Whether the row's node cell is a node number written without quotes (a quoted cell is a name,
/// whatever it holds): nodes are numbered when every row's is.
bool numbered_node(const CsvRow& row) {
  return row.fields.size() < 2 || (!row.quoted[1] && is_node_number(row.fields[1]));
}

/// A name or cause cell: as written when quoted, else without surrounding spaces.
std::string_view cell(const CsvRow& row, std::size_t i) {
  return row.quoted[i] ? std::string_view(row.fields[i]) : trim(row.fields[i]);
}

EventKind parse_event(std::string_view cell, const std::string& where) {
  const std::string_view t = trim(cell);
  if (t == "down") return EventKind::kDown;
  if (t == "up") return EventKind::kUp;
  throw InputError(where, "unknown event '" + shown(t) + "', expected down or up");
}

}  // namespace

LoadedTrace parse_native_csv(const std::string& text, const std::string& source,
                             const ImportOptions& options) {
  if (const std::string_view body = without_byte_order_mark(text); body.size() < text.size()) {
    if (without_byte_order_mark(body).size() < body.size())  // one mark is skipped, not a run
      throw InputError(source + ":1", "more than one byte order mark at the start of the file");
    return parse_native_csv(std::string(body), source, options);
  }
  require_text(text, source);
  Preamble preamble = read_preamble(text, source);
  if (preamble.header_line == 0) {
    const std::string where = source + ":" + std::to_string(preamble.last_line + 1);
    throw InputError(where, std::string(text.empty() ? "empty file" : "no header") +
                                ", expected the header " + std::string(kNativeHeader));
  }
  // Two passes over the text, one record at a time (a file at the event limit holds 50 million):
  // the header and whether every node is a number, then the events.
  bool header = true;
  bool numbered = true;
  for_each_csv_row(text, source, [&](const CsvRow& row) {
    if (header) {
      header = false;
      std::vector<std::string> got;
      for (const auto& field : row.fields) got.emplace_back(trim(field));
      if (got != std::vector<std::string>{"time_s", "node", "event", "cause"}) {
        throw InputError(row.where(source), "expected the header " + std::string(kNativeHeader));
      }
      return true;
    }
    numbered = numbered_node(row);
    return numbered;
  });

  TraceBuilder builder(numbered ? TraceBuilder::Naming::kNumbered : TraceBuilder::Naming::kNamed,
                       options.lenient);
  for (std::string& comment : preamble.comments) builder.add_comment(std::move(comment));
  if (preamble.nodes > 0) builder.set_node_count(preamble.nodes, preamble.nodes_where);
  if (preamble.duration >= 0) builder.set_duration(preamble.duration, preamble.duration_where);
  header = true;
  for_each_csv_row(text, source, [&](const CsvRow& row) {
    if (header) {
      header = false;
      return true;
    }
    const std::string where = row.where(source);
    if (row.fields.size() != 4) {
      throw InputError(where, "expected 4 columns (" + std::string(kNativeHeader) + "), got " +
                                  std::to_string(row.fields.size()));
    }
    const Nanos time = read_seconds(row.fields[0], where, "time_s");
    const std::string_view node_cell = cell(row, 1);
    if (trim(node_cell).empty()) throw InputError(where, "empty node");
    // A name or cause that could not be written back (a tab inside a quoted cell) is refused here,
    // where the file and line can be named, not when the trace is written.
    if (!numbered) require_writable(node_cell, where, "node name", false);
    require_writable(cell(row, 3), where, "cause", true);
    const NodeId node =
        numbered ? static_cast<NodeId>(parse_int(node_cell, where)) : builder.named_node(node_cell);
    const EventKind kind = parse_event(row.fields[2], where);
    builder.add(time, node, kind, builder.cause(cell(row, 3)), source, row.line);
    return true;
  });
  apply_declarations(options, builder);
  return std::move(builder).finish();
}

LoadedTrace read_native_csv(const std::string& path, const ImportOptions& options) {
  return parse_native_csv(read_text_file(path, kMaxTraceFileBytes), path, options);
}

namespace {

/// A name or cause as a cell that reads back as the same text: quoted when `quote` is set, or when
/// it has leading or trailing spaces (the reader trims unquoted cells).
std::string text_cell(const std::string& text, bool quote) {
  return quote || trim(text).size() != text.size() ? csv_quote(text) : csv_escape(text);
}

/// A node's cell. A name that reads as a node number is quoted, so that a named trace reads back
/// named (and its node count means the same): unquoted, `3` would be node id 3 of a numbered trace.
std::string node_cell(const Trace& trace, NodeId node) {
  const std::string name = trace.node_name(node);
  return text_cell(name, !trace.numbered() && is_node_number(name));
}

}  // namespace

void require_writable(std::string_view text, const std::string& where, std::string_view what,
                      bool may_be_empty) {
  const bool blank = text.find_first_not_of(' ') == std::string_view::npos;
  const bool control = std::any_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  if ((blank && !(may_be_empty && text.empty())) || control) {
    throw InputError(where, std::string(what) + (what.empty() ? "'" : " '") + shown(text) +
                                "' is blank or holds a control character, so a trace naming it "
                                "would not read back");
  }
}

namespace {

/// The native CSV text, or nullopt as soon as it passes `max_bytes` (so a trace too large to write
/// is not built whole first).
std::optional<std::string> format_within(const Trace& trace, std::size_t max_bytes) {
  std::string out;
  out.reserve(64 + trace.events().size() * 32);
  for (const std::string& comment : trace.comments()) {
    std::string line = comment;  // a comment is one line: control characters become '?'
    for (char& c : line) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    out += "# " + line + "\n";
  }
  out += "# " + std::string(kNodesKey) + ": " + std::to_string(trace.node_count()) + "\n";
  out += "# " + std::string(kDurationKey) + ": " + format_seconds(trace.duration()) + "\n";
  out += kNativeHeader;
  out += '\n';
  for (const Event& event : trace.events()) {
    require_writable(trace.node_name(event.node), "node name", "", false);
    require_writable(trace.cause(event.cause), "cause", "", true);
    out += format_seconds(event.time);
    out += ',';
    out += node_cell(trace, event.node);
    out += ',';
    out += to_string(event.kind);
    out += ',';
    out += text_cell(trace.cause(event.cause), false);
    out += '\n';
    if (out.size() > max_bytes) return std::nullopt;
  }
  if (out.size() > max_bytes) return std::nullopt;
  return out;
}

}  // namespace

std::string format_native_csv(const Trace& trace) {
  return *format_within(trace, std::numeric_limits<std::size_t>::max());
}

void write_native_csv(const Trace& trace, const std::string& path, std::size_t max_bytes) {
  // What this writes, read_native_csv reads back: it refuses a trace of no nodes, and a file past
  // the size it reads.
  if (trace.node_count() < 1) {
    throw InputError(path,
                     "the trace names no node, so it would not read back: give --nodes N "
                     "(the nodes it was recorded on)");
  }
  const std::optional<std::string> text = format_within(trace, max_bytes);
  if (!text) {
    throw InputError(path, fmt::format("the trace's {} events take more than the {} bytes a "
                                       "trace file may hold, so it would not read back",
                                       trace.events().size(), max_bytes));
  }
  write_text_file(path, *text);
}

}  // namespace recycle::traces
