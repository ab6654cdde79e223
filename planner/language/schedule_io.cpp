#include "planner/language/schedule_io.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/json.hpp"
#include "core/parse.hpp"
#include "planner/language/lower.hpp"
#include "planner/language/timing.hpp"
#include "planner/language/torch_dialect.hpp"

namespace recycle::planner {

namespace {

constexpr std::string_view kFormat = "recycle.schedule/1";
constexpr std::string_view kTokenExample = R"(an action token like "0F3" or "2I5@1")";

/// `text` for an error message: at most 40 bytes, control and non-ASCII bytes as \xNN, so that
/// binary garbage cannot flood or corrupt the terminal.

// ---------------------------------------------------------------------------------------------
// JSON

void append_worker_id(std::string& out, WorkerId id) {
  out += R"({"dp": )" + std::to_string(id.dp) + R"(, "stage": )" + std::to_string(id.stage) + "}";
}

/// Appends `items` as a JSON array inside the top-level object, one item per line; `[]` when empty.
template <typename T, typename Fn>
void append_array(std::string& out, const std::vector<T>& items, Fn&& append_item) {
  if (items.empty()) {
    out += "[]";
    return;
  }
  out += "[\n";
  for (std::size_t i = 0; i < items.size(); ++i) {
    out += "    ";
    append_item(out, items[i]);
    out += i + 1 < items.size() ? ",\n" : "\n";
  }
  out += "  ]";
}

std::int32_t read_int(const JsonView& view, std::string_view key, std::int32_t min,
                      std::int32_t max) {
  return static_cast<std::int32_t>(view.at(key).as_int(min, max));
}

WorkerId read_worker_id(const JsonView& view, const Layout& layout) {
  return {read_int(view, "dp", 0, layout.dp - 1), read_int(view, "stage", 0, layout.pp - 1)};
}

/// Sorts `items` by worker and rejects a worker listed twice; `list` is the array they came from.
template <typename T, typename IdOf>
void sort_unique_workers(std::vector<T>& items, IdOf&& id_of, const JsonView& list) {
  std::vector<std::size_t> order(items.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return id_of(items[a]) < id_of(items[b]); });
  for (std::size_t k = 1; k < order.size(); ++k) {
    if (id_of(items[order[k]]) != id_of(items[order[k - 1]])) continue;
    const std::string first = list.path() + "[" + std::to_string(order[k - 1]) + "]";
    list.items()[order[k]].fail("worker " + to_string(id_of(items[order[k]])) +
                                " is listed twice (first at " + first + ")");
  }
  std::vector<T> sorted;
  sorted.reserve(items.size());
  for (const std::size_t i : order) sorted.push_back(std::move(items[i]));
  items = std::move(sorted);
}

Route read_route(const JsonView& view, const Layout& layout) {
  Route route;
  route.owner = read_int(view, "owner", 0, layout.dp - 1);
  route.stage = read_int(view, "stage", 0, layout.pp - 1);
  route.microbatch = read_int(view, "microbatch", 0, layout.microbatches - 1);
  route.dp = read_int(view, "dp", 0, layout.dp - 1);
  return route;
}

/// Problem with a parsed action's numbers, or nullopt if all are in range of `layout`.
std::optional<std::string> action_range_problem(const Action& action, const Layout& layout) {
  if (action.virtual_stage >= layout.virtual_stages()) {
    return "virtual stage " + std::to_string(action.virtual_stage) +
           " out of range: the layout has " + std::to_string(layout.virtual_stages()) + " (pp " +
           std::to_string(layout.pp) + " x interleave " + std::to_string(layout.interleave) + ")";
  }
  if (action.microbatch >= layout.microbatches) {
    return "micro-batch " + std::to_string(action.microbatch) + " out of range: the layout has " +
           std::to_string(layout.microbatches) + " per pipeline";
  }
  if (action.owner >= layout.dp) {
    return "owner pipeline " + std::to_string(action.owner) + " out of range: the layout has dp " +
           std::to_string(layout.dp);
  }
  return std::nullopt;
}

/// The actions of one worker. Walks the raw array (the hot loop of a large file) and builds a
/// JsonView path only for an element that is wrong.
std::vector<Action> read_actions(const JsonView& list, const std::string& source,
                                 const Layout& layout, std::int32_t worker_dp) {
  const nlohmann::json& raw = list.raw();
  if (!raw.is_array()) (void)list.items();  // fails with "expected an array"
  std::vector<Action> actions;
  actions.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const nlohmann::json& element = raw[i];
    const auto element_view = [&] {
      return JsonView(element, source, list.path() + "[" + std::to_string(i) + "]");
    };
    if (!element.is_string()) (void)element_view().as_string();  // fails with the type
    const auto& token = element.get_ref<const std::string&>();
    const std::optional<Action> action = parse_token(token, worker_dp);
    if (!action) {
      element_view().fail("expected " + std::string(kTokenExample) + ", got \"" + shown(token) +
                          "\"");
    }
    if (const auto problem = action_range_problem(*action, layout)) {
      element_view().fail("\"" + shown(token) + "\": " + *problem);
    }
    actions.push_back(*action);
  }
  return actions;
}

// ---------------------------------------------------------------------------------------------
// PyTorch CSV

/// Pipeline 0's workers, one per stage, after checking that every pipeline runs the same lists on
/// its own micro-batches; throws InputError for a schedule the CSV cannot hold.
std::vector<const WorkerSchedule*> the_one_pipeline(const Schedule& schedule) {
  const Layout& layout = schedule.layout;
  if (!schedule.failed.empty() || !schedule.routes.empty()) {
    throw InputError(
        "--format",
        "the PyTorch CSV holds one fault-free pipeline; this schedule has failed workers "
        "and re-routes work, write JSON instead");
  }
  if (schedule.weight_versions != 1 || schedule.has_lags()) {
    throw InputError("--format",
                     "torch.distributed.pipelining runs one weight version and flushes the "
                     "pipeline every iteration; this schedule (" +
                         std::string(optimizer_name(schedule)) +
                         ") runs across iterations, write JSON instead");
  }
  const auto differs = [] {
    return InputError(
        "--format",
        "the PyTorch CSV holds one pipeline that every pipeline runs; this schedule's "
        "pipelines run different lists, write JSON instead");
  };
  const auto expected = static_cast<std::size_t>(layout.dp) * static_cast<std::size_t>(layout.pp);
  if (schedule.workers.size() != expected) throw differs();
  std::vector<const WorkerSchedule*> pipeline(static_cast<std::size_t>(layout.pp));
  for (std::size_t i = 0; i < schedule.workers.size(); ++i) {
    const WorkerSchedule& worker = schedule.workers[i];
    const auto pp = static_cast<std::size_t>(layout.pp);
    const WorkerId id{static_cast<std::int32_t>(i / pp), static_cast<std::int32_t>(i % pp)};
    if (worker.id != id) throw differs();
    if (id.dp == 0) pipeline[i] = &worker;
    const std::vector<Action>& reference = pipeline[i % pp]->actions;
    if (worker.actions.size() != reference.size()) throw differs();
    for (std::size_t k = 0; k < reference.size(); ++k) {
      const Action& a = worker.actions[k];
      const Action& r = reference[k];
      const bool same = a.type == r.type && a.virtual_stage == r.virtual_stage &&
                        a.microbatch == r.microbatch && a.owner == id.dp && r.owner == 0;
      if (!same) throw differs();
    }
  }
  return pipeline;
}

std::vector<std::vector<std::string>> compute_comms_rows(
    const Schedule& schedule, const std::vector<const WorkerSchedule*>& pipeline,
    TorchVersion version) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(pipeline.size());
  for (const WorkerSchedule* worker : pipeline)
    rows.push_back(torch_comms_row(worker->actions, schedule.layout.microbatches, version));
  return rows;
}

/// Compute actions on a grid of unit time steps: every compute action lasts one step and starts
/// as soon as its dependencies allow (planner/language/timing.hpp); empty cells are idle steps.
std::vector<std::vector<std::string>> compute_only_rows(
    const Schedule& schedule, const std::vector<const WorkerSchedule*>& pipeline) {
  Schedule one;
  one.generator = schedule.generator;
  one.layout = schedule.layout;
  one.layout.dp = 1;
  for (const WorkerSchedule* worker : pipeline) one.workers.push_back(*worker);
  one = strip_to_compute(one);

  const auto unit = [](WorkerId, const Action& a) -> Nanos { return is_compute(a.type) ? 1 : 0; };
  const std::optional<Timeline> timeline = compute_timeline(one, unit);
  if (!timeline) {
    throw InputError("--format",
                     "compute_only places actions on a time grid, but this schedule deadlocks; "
                     "check it with the validator");
  }
  std::vector<std::vector<std::string>> rows(one.workers.size());
  for (std::size_t w = 0; w < one.workers.size(); ++w) {
    const std::vector<Action>& actions = one.workers[w].actions;
    const std::vector<ActionTime>& times = timeline->workers[w];
    std::vector<std::string>& row = rows[w];
    for (std::size_t k = 0; k < actions.size(); ++k) {
      const auto step = static_cast<std::size_t>(times[k].start);
      if (row.size() <= step) row.resize(step + 1);
      RECYCLE_ASSERT(row[step].empty(), "two unit-length actions on one worker start at one step");
      row[step] = to_token(actions[k], 0);
    }
  }
  return rows;
}

}  // namespace

Layout read_layout(const JsonView& view) {
  Layout layout;
  layout.dp = read_int(view, "dp", 1, kMaxDp);
  layout.pp = read_int(view, "pp", 1, kMaxPp);
  layout.microbatches = read_int(view, "microbatches", 1, kMaxMicrobatches);
  const auto interleave = view.find("interleave");
  layout.interleave =
      interleave ? static_cast<std::int32_t>(interleave->as_int(1, kMaxInterleave)) : 1;
  if (const auto placement = view.find("placement")) {
    layout.placement = placement->as_choice({"loop", "v"}) == 1 ? Placement::kV : Placement::kLoop;
  }
  return layout;
}

std::string layout_json(const Layout& layout) {
  return R"({"dp": )" + std::to_string(layout.dp) + R"(, "pp": )" + std::to_string(layout.pp) +
         R"(, "microbatches": )" + std::to_string(layout.microbatches) + R"(, "interleave": )" +
         std::to_string(layout.interleave) +
         (layout.placement == Placement::kLoop
              ? std::string()
              : R"(, "placement": ")" + std::string(placement_name(layout.placement)) + "\"") +
         "}";
}

std::string to_json(const Schedule& schedule, const SteadyState* steady) {
  const Layout& layout = schedule.layout;
  std::string out;
  std::size_t tokens = 0;
  for (const WorkerSchedule& worker : schedule.workers) tokens += worker.actions.size();
  out.reserve(256 + schedule.routes.size() * 64 + schedule.workers.size() * 64 + tokens * 10);

  out += "{\n";
  out += R"(  "format": ")" + std::string(kFormat) + "\",\n";
  out += R"(  "generator": )" + nlohmann::json(schedule.generator).dump() + ",\n";
  out += R"(  "layout": )" + layout_json(layout) + ",\n";
  out += R"(  "optimizer": ")" + std::string(optimizer_name(schedule)) + "\",\n";
  if (steady != nullptr) {
    out += fmt::format("  \"makespan_s\": {},\n  \"period_s\": {},\n",
                       nlohmann::json(to_seconds(steady->makespan)).dump(),
                       nlohmann::json(to_seconds(steady->period)).dump());
  }
  out += R"(  "failed": )";
  append_array(out, schedule.failed, append_worker_id);
  out += ",\n";
  out += R"(  "routes": )";
  append_array(out, schedule.routes, [](std::string& o, const Route& r) {
    o += R"({"owner": )" + std::to_string(r.owner) + R"(, "stage": )" + std::to_string(r.stage) +
         R"(, "microbatch": )" + std::to_string(r.microbatch) + R"(, "dp": )" +
         std::to_string(r.dp) + "}";
  });
  out += ",\n";
  out += R"(  "workers": )";
  append_array(out, schedule.workers, [](std::string& o, const WorkerSchedule& w) {
    o += R"({"dp": )" + std::to_string(w.id.dp) + R"(, "stage": )" + std::to_string(w.id.stage) +
         R"(, "actions": [)";
    for (std::size_t i = 0; i < w.actions.size(); ++i) {
      if (i > 0) o += ", ";
      o += '"';
      o += to_token(w.actions[i], w.id.dp);  // tokens are [0-9A-Z_@']: nothing to escape
      o += '"';
    }
    o += "]}";
  });
  out += "\n}\n";
  return out;
}

Schedule schedule_from_json(const std::string& text, const std::string& source) {
  const nlohmann::json root = parse_json(text, source);
  return schedule_from_json(JsonView(root, source));
}

Schedule schedule_from_json(const JsonView& view) {
  view.at("format").check_format(kFormat);

  Schedule schedule;
  schedule.generator = view.at("generator").as_string();
  // The name is printed in reports, SVG and text timelines: one line, no control characters.
  if (std::any_of(schedule.generator.begin(), schedule.generator.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    view.at("generator")
        .fail("expected a name without control characters (a newline, a tab), got \"" +
              shown(schedule.generator) + "\"");
  }
  schedule.layout = read_layout(view.at("layout"));
  const Layout& layout = schedule.layout;
  if (const auto optimizer = view.find("optimizer")) {
    const std::size_t mode = optimizer->as_choice({"barrier", "staggered", "2bw"});
    schedule.staggered_optimizer = mode >= 1;
    schedule.weight_versions = mode == 2 ? 2 : 1;
  }

  if (const auto failed = view.find("failed")) {
    for (const JsonView& item : failed->items())
      schedule.failed.push_back(read_worker_id(item, layout));
    sort_unique_workers(
        schedule.failed, [](const WorkerId& id) { return id; }, *failed);
  }
  if (const auto routes = view.find("routes")) {
    for (const JsonView& item : routes->items())
      schedule.routes.push_back(read_route(item, layout));
    std::sort(schedule.routes.begin(), schedule.routes.end());
  }

  const JsonView workers = view.at("workers");
  for (const JsonView& item : workers.items()) {
    WorkerSchedule worker;
    worker.id = read_worker_id(item, layout);
    worker.actions = read_actions(item.at("actions"), view.source(), layout, worker.id.dp);
    schedule.workers.push_back(std::move(worker));
  }
  sort_unique_workers(
      schedule.workers, [](const WorkerSchedule& w) { return w.id; }, workers);
  return schedule;
}

std::string to_pytorch_csv(const Schedule& schedule, CsvFormat format, TorchVersion version) {
  const std::vector<const WorkerSchedule*> pipeline = the_one_pipeline(schedule);
  const std::vector<std::vector<std::string>> rows =
      format == CsvFormat::kComputeOnly ? compute_only_rows(schedule, pipeline)
                                        : compute_comms_rows(schedule, pipeline, version);
  std::string out;
  for (std::size_t rank = 0; rank < rows.size(); ++rank) {
    // An empty line would be skipped on reading and shift every later rank.
    if (rows[rank].empty()) {
      throw InputError("--format",
                       "stage " + std::to_string(rank) +
                           " has no actions to write, and the PyTorch CSV cannot hold an "
                           "empty rank; write JSON instead");
    }
    for (std::size_t i = 0; i < rows[rank].size(); ++i) {
      if (i > 0) out += ',';
      out += rows[rank][i];
    }
    out += '\n';
  }
  return out;
}

Schedule schedule_from_pytorch_csv(const std::string& text, const std::string& source,
                                   std::optional<Placement> placement) {
  const std::vector<CsvRow> rows = parse_csv(text, source);
  if (rows.empty()) {
    throw InputError(
        source,
        "empty file, expected a PyTorch pipelining CSV (one row of action tokens per rank)");
  }
  if (rows.size() > static_cast<std::size_t>(kMaxPp)) {
    throw InputError(rows[kMaxPp].where(source),
                     "too many rows: at most " + std::to_string(kMaxPp) + " pipeline ranks");
  }
  const auto pp = static_cast<std::int32_t>(rows.size());
  const std::int32_t max_virtual_stage = pp * kMaxInterleave - 1;

  // Every token's virtual stage, where it was: the placement is decided once all are read.
  struct Seen {
    std::int32_t rank = 0;
    std::size_t column = 0;
    std::int32_t virtual_stage = 0;
    std::string_view cell;
  };
  std::vector<Seen> seen;
  const auto fail_at = [&](const Seen& at, const std::string& problem) {
    throw InputError(rows[static_cast<std::size_t>(at.rank)].where(source),
                     "column " + std::to_string(at.column + 1) + ": " + problem);
  };

  Schedule schedule;
  schedule.generator = "file";
  std::int32_t top_virtual_stage = -1;
  std::int32_t top_microbatch = -1;
  for (std::int32_t rank = 0; rank < pp; ++rank) {
    const CsvRow& row = rows[static_cast<std::size_t>(rank)];
    WorkerSchedule& worker = schedule.workers.emplace_back();
    worker.id = {0, rank};
    std::int32_t reduce_at = -1;  // torch writes one REDUCE_GRAD per virtual stage: keep the last
    for (std::size_t column = 0; column < row.fields.size(); ++column) {
      const std::string_view cell = trim(row.fields[column]);
      if (cell.empty()) continue;  // an idle time step
      const Seen here{rank, column, 0, cell};
      const std::optional<TorchCell> parsed = parse_torch_cell(cell);
      if (!parsed) {
        fail_at(here, "expected " + std::string(kTokenExample) + " or a torch token like " +
                          "\"1WAIT_SEND_F0\", got '" + shown(cell) + "'");
      }
      for (const std::int32_t v : parsed->virtual_stages) {
        if (v > max_virtual_stage) {
          fail_at(here, "'" + shown(cell) + "': virtual stage out of range: at most " +
                            std::to_string(kMaxInterleave) + " chunks per rank, so at most " +
                            std::to_string(max_virtual_stage));
        }
        seen.push_back({rank, column, v, cell});
        top_virtual_stage = std::max(top_virtual_stage, v);
      }
      for (const Action& action : parsed->actions) {
        if (action.owner != 0) {
          fail_at(here, "'" + shown(cell) + "' names pipeline " + std::to_string(action.owner) +
                            ", but a PyTorch CSV holds one pipeline (0)");
        }
        if (action.microbatch >= kMaxMicrobatches) {
          fail_at(here, "'" + shown(cell) + "': micro-batch out of range: at most " +
                            std::to_string(kMaxMicrobatches) + " per pipeline");
        }
        top_microbatch = std::max(top_microbatch, action.microbatch);
        if (action.type == ActionType::kReduceGrad) {
          if (reduce_at >= 0) worker.actions.erase(worker.actions.begin() + reduce_at);
          reduce_at = static_cast<std::int32_t>(worker.actions.size());
        }
        worker.actions.push_back(action);
      }
    }
    // recycle's REDUCE_GRAD reduces the whole worker; its token names the worker's stage.
    if (reduce_at >= 0) worker.actions[static_cast<std::size_t>(reduce_at)].virtual_stage = rank;
  }
  if (top_virtual_stage < 0) throw InputError(source, "no action tokens, expected at least one");
  // Without a SEND or RECV the file is compute-only (torch 2.15 puts REDUCE_GRAD even in those):
  // it is lowered before it runs, which puts REDUCE_GRAD and OPT at the end of every list.
  const bool communicates =
      std::any_of(schedule.workers.begin(), schedule.workers.end(), [](const WorkerSchedule& w) {
        return std::any_of(w.actions.begin(), w.actions.end(),
                           [](const Action& a) { return is_comm(a.type); });
      });
  if (!communicates) {
    for (WorkerSchedule& w : schedule.workers)
      std::erase_if(w.actions, [](const Action& a) { return is_per_iteration(a.type); });
  }

  schedule.layout.dp = 1;
  schedule.layout.pp = pp;
  schedule.layout.microbatches = std::max(top_microbatch + 1, 1);
  schedule.layout.interleave = top_virtual_stage / pp + 1;
  // The placement: the one given, else the first of loop and V that puts every token on its row.
  const auto misplaced = [&](Placement p) -> const Seen* {
    Layout layout = schedule.layout;
    layout.placement = p;
    const auto it = std::find_if(seen.begin(), seen.end(), [&](const Seen& t) {
      return layout.stage_of(t.virtual_stage) != t.rank;
    });
    return it == seen.end() ? nullptr : &*it;
  };
  const auto describe = [&](const Seen& t, Placement p) {
    Layout layout = schedule.layout;
    layout.placement = p;
    const bool placed = layout.chunk_of(t.virtual_stage) % 2 == 1;  // where the two differ
    return "'" + shown(t.cell) + "' is for stage " +
           std::to_string(layout.stage_of(t.virtual_stage)) + " (virtual stage " +
           std::to_string(t.virtual_stage) + " of " + std::to_string(pp) + " ranks" +
           (placed ? std::string(" placed in ") + (p == Placement::kV ? "a V" : "a loop") : "") +
           "), but this row is rank " + std::to_string(t.rank);
  };
  if (placement) {
    if (const Seen* t = misplaced(*placement)) {
      fail_at(*t, describe(*t, *placement) + " (--placement " + placement_name(*placement) + ")");
    }
  } else if (misplaced(Placement::kLoop) == nullptr) {
    placement = Placement::kLoop;
  } else if (misplaced(Placement::kV) == nullptr) {
    placement = Placement::kV;
  } else {
    const Seen& t = *misplaced(Placement::kLoop);
    const Seen& u = *misplaced(Placement::kV);
    if (&t == &u) fail_at(t, describe(t, Placement::kLoop));  // on no rank of either placement
    fail_at(t, describe(t, Placement::kLoop) + "; a V placement does not fit either: '" +
                   shown(u.cell) + "' at line " +
                   std::to_string(rows[static_cast<std::size_t>(u.rank)].line) + ", column " +
                   std::to_string(u.column + 1));
  }
  schedule.layout.placement = *placement;
  return schedule;
}

Schedule load_schedule(const std::string& path, std::optional<Placement> placement) {
  const std::string file = read_text_file(path);
  const std::string text(without_byte_order_mark(file));  // as every other reader skips it
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    Schedule schedule = schedule_from_json(text, path);
    if (placement && schedule.layout.placement != *placement) {
      throw InputError(path, std::string("the file places its chunks in ") +
                                 (schedule.layout.placement == Placement::kV ? "a V" : "a loop") +
                                 " (layout.placement), but --placement is " +
                                 placement_name(*placement));
    }
    return schedule;
  }
  return schedule_from_pytorch_csv(text, path, placement);
}

}  // namespace recycle::planner
