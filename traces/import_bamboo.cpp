#include "traces/import_bamboo.hpp"

#include <functional>
#include <queue>
#include <unordered_map>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/parse.hpp"
#include "traces/text_lines.hpp"

namespace recycle::traces {

namespace {

constexpr std::string_view kPreempted = "spot preemption";
constexpr std::string_view kNotYetObtained = "spot capacity not yet obtained";

/// One row, resolved to a slot.
struct SlotEvent {
  Nanos time = 0;
  NodeId slot = 0;
  EventKind kind = EventKind::kDown;
  std::size_t line = 0;
};

/// Packs instances into slots; what a lenient read dropped is counted in `repairs`.
class SlotAllocator {
 public:
  SlotAllocator(const std::string& source, bool lenient, Repairs& repairs)
      : source_(source), lenient_(lenient), repairs_(repairs) {}

  void add(Nanos time, const std::string& name, std::size_t line) {
    if (live_.contains(name)) {
      refuse(line, "instance '" + shown(name) + "' is added while it is running",
             repairs_.up_without_down);
      return;
    }
    const bool reused = !free_.empty();
    NodeId slot = slots();
    if (reused) {
      slot = free_.top();
      free_.pop();
    } else {
      first_filled_.push_back(time);
    }
    live_.emplace(name, slot);
    // A slot first filled at time 0 was up from the start: no event.
    if (reused || time > 0) events_.push_back({time, slot, EventKind::kUp, line});
  }

  void remove(Nanos time, const std::string& name, std::size_t line) {
    const auto it = live_.find(name);
    if (it == live_.end()) {
      refuse(line, "instance '" + shown(name) + "' is removed but is not running",
             repairs_.repeated_down);
      return;
    }
    events_.push_back({time, it->second, EventKind::kDown, line});
    free_.push(it->second);
    live_.erase(it);
  }

  [[nodiscard]] NodeId slots() const noexcept { return static_cast<NodeId>(first_filled_.size()); }
  [[nodiscard]] Nanos first_filled(NodeId slot) const { return first_filled_[slot]; }
  [[nodiscard]] const std::vector<SlotEvent>& events() const noexcept { return events_; }

 private:
  void refuse(std::size_t line, const std::string& problem, std::int64_t& counter) {
    if (!lenient_) {
      throw InputError(source_ + ":" + std::to_string(line),
                       problem + " (use --lenient to drop such rows)");
    }
    ++counter;
  }

  const std::string& source_;
  bool lenient_;
  Repairs& repairs_;
  std::unordered_map<std::string, NodeId> live_;
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> free_;
  std::vector<Nanos> first_filled_;  ///< per slot
  std::vector<SlotEvent> events_;
};

}  // namespace

LoadedTrace parse_bamboo(const std::string& text, const std::string& source,
                         const ImportOptions& options) {
  if (const std::string_view body = without_byte_order_mark(text); body.size() < text.size()) {
    if (without_byte_order_mark(body).size() < body.size())  // one mark is skipped, not a run
      throw InputError(source + ":1", "more than one byte order mark at the start of the file");
    return parse_bamboo(std::string(body), source, options);
  }
  require_text(text, source);
  const std::vector<CsvRow> rows = parse_csv(text, source);
  if (rows.empty())
    throw InputError(source + ":1", "empty file, expected delta_ms,add|remove,name rows");
  Repairs repairs;
  SlotAllocator slots(source, options.lenient, repairs);
  Nanos previous = 0;
  for (const CsvRow& row : rows) {
    const std::string where = row.where(source);
    if (row.fields.size() != 3) {
      throw InputError(where, "expected 3 columns (delta_ms,add|remove,name), got " +
                                  std::to_string(row.fields.size()));
    }
    const std::int64_t ms = parse_int(row.fields[0], where);
    if (ms < 0 || ms > kMaxTime / 1'000'000)
      throw InputError(where, "delta_ms must be in [0, 1e12]");
    const Nanos time = ms * 1'000'000;
    if (time < previous) {
      throw InputError(where, "time goes backwards: " + std::to_string(ms) + " ms after " +
                                  std::to_string(previous / 1'000'000) +
                                  " ms (rows must be sorted)");
    }
    previous = time;
    const std::string name(trim(row.fields[2]));
    if (name.empty()) throw InputError(where, "empty instance name");
    const std::string_view event = trim(row.fields[1]);
    if (event == "add") {
      slots.add(time, name, row.line);
    } else if (event == "remove") {
      slots.remove(time, name, row.line);
    } else {
      throw InputError(where, "unknown event '" + shown(event) + "', expected add or remove");
    }
  }

  TraceBuilder builder(TraceBuilder::Naming::kNumbered, options.lenient);
  builder.add_comment("imported from Bamboo spot trace " + source +
                      " (one node per instance slot)");
  const CauseId not_yet = builder.cause(kNotYetObtained);
  for (NodeId slot = 0; slot < slots.slots(); ++slot) {
    if (slots.first_filled(slot) > 0) builder.add(0, slot, EventKind::kDown, not_yet, source, 0);
  }
  const CauseId preempted = builder.cause(kPreempted);
  for (const SlotEvent& event : slots.events()) {
    const CauseId cause = event.kind == EventKind::kDown ? preempted : 0;
    builder.add(event.time, event.slot, event.kind, cause, source, event.line);
  }
  builder.set_node_count(slots.slots(), source);
  apply_declarations(options, builder);
  LoadedTrace loaded = std::move(builder).finish();
  loaded.repairs.up_without_down += repairs.up_without_down;
  loaded.repairs.repeated_down += repairs.repeated_down;
  return loaded;
}

LoadedTrace read_bamboo(const std::string& path, const ImportOptions& options) {
  return parse_bamboo(read_text_file(path), path, options);
}

}  // namespace recycle::traces
