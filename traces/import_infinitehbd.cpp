#include "traces/import_infinitehbd.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/json.hpp"
#include "traces/native_csv.hpp"

namespace recycle::traces {

namespace {

struct Record {
  Nanos time = 0;
  std::string node;
  bool start = false;
  std::string cause;
  std::size_t index = 0;  ///< position in the JSON array, for errors
};

Record read_record(const JsonView& item, std::size_t index) {
  Record record;
  record.index = index;
  record.node = item.at("node_id").as_string();
  if (record.node.empty()) item.at("node_id").fail("empty node_id");
  require_writable(record.node, item.at("node_id").where(), "node", false);
  const JsonView time = item.at("event_time");
  const double days = time.as_nonnegative();
  if (days > kMaxDays) time.fail("event_time beyond 1e9 s");
  record.time = seconds_to_trace_time(days * kSecondsPerDay);
  const JsonView type = item.at("event_type");
  const std::string kind = type.as_string();
  if (kind != "fault_start" && kind != "fault_end") {
    type.fail("unknown event_type '" + shown(kind) + "', expected fault_start or fault_end");
  }
  record.start = kind == "fault_start";
  const JsonView fault = item.at("fault_type");
  record.cause = fault.at("Level").as_string() + " / " + fault.at("Class").as_string() + " / " +
                 fault.at("Desc").as_string();
  require_writable(record.cause, fault.where(), "cause", true);
  return record;
}

}  // namespace

LoadedTrace parse_infinitehbd(const std::string& text, const std::string& source,
                              const ImportOptions& options) {
  const nlohmann::json json = parse_json(text, source);
  const std::vector<JsonView> items = JsonView(json, source).items();
  if (static_cast<std::int64_t>(items.size()) > kMaxEvents) {
    JsonView(json, source).fail("more than " + std::to_string(kMaxEvents) + " events");
  }
  std::vector<Record> records;
  records.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) records.push_back(read_record(items[i], i));
  // The published file is sorted; a hand-edited one need not be.
  std::stable_sort(records.begin(), records.end(),
                   [](const Record& a, const Record& b) { return a.time < b.time; });

  TraceBuilder builder(TraceBuilder::Naming::kNamed, options.lenient);
  builder.add_comment("imported from InfiniteHBD trace " + source);
  std::vector<std::int64_t> open_faults;  ///< per node
  std::int64_t merged = 0;
  for (const Record& record : records) {
    const NodeId node = builder.named_node(record.node);
    if (node >= open_faults.size()) open_faults.resize(node + 1, 0);
    std::int64_t& open = open_faults[node];
    const std::string where = source + ": [" + std::to_string(record.index) + "]";
    if (record.start) {
      if (open++ > 0) {
        ++merged;
        continue;
      }
      builder.add(record.time, node, EventKind::kDown, builder.cause(record.cause), where, 0);
      continue;
    }
    // An end with no open fault goes to the builder, which refuses it (or, lenient, drops it).
    if (open > 0 && --open > 0) continue;
    builder.add(record.time, node, EventKind::kUp, 0, where, 0);
  }
  apply_declarations(options, builder);
  LoadedTrace loaded = std::move(builder).finish();
  if (merged > 0) {
    loaded.notes.push_back(
        std::to_string(merged) +
        " fault_start events fell in an outage of the same node already under way "
        "and were merged into it");
  }
  return loaded;
}

LoadedTrace read_infinitehbd(const std::string& path, const ImportOptions& options) {
  return parse_infinitehbd(read_text_file(path), path, options);
}

}  // namespace recycle::traces
