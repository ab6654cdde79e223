#include "traces/import_simgrid.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/parse.hpp"
#include "traces/native_csv.hpp"
#include "traces/text_lines.hpp"

namespace recycle::traces {

namespace {

struct DatedState {
  Nanos date = 0;
  bool on = true;
  std::size_t line = 0;
};

struct Pattern {
  std::vector<DatedState> points;
  std::optional<Nanos> loop_delay;  ///< SimGrid's LOOPAFTER, or PERIODICITY - last date
  std::size_t loop_line = 0;
};

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    const std::size_t start = line.find_first_not_of(" \t", i);
    if (start == std::string_view::npos) break;
    const std::size_t end = std::min(line.find_first_of(" \t", start), line.size());
    out.push_back(line.substr(start, end - start));
    i = end;
  }
  return out;
}

Pattern read_pattern(const SimGridProfile& profile) {
  const std::string_view text = without_byte_order_mark(profile.text);
  require_text(text, profile.source);
  Pattern pattern;
  std::optional<Nanos> periodicity;
  for_each_line(text, [&](std::size_t number, std::string_view raw) {
    const std::string where = profile.source + ":" + std::to_string(number);
    const std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#' || line.front() == '%') return true;
    const std::vector<std::string_view> w = words(line);
    if (w[0] == "LOOPAFTER" || w[0] == "PERIODICITY") {
      if (w.size() != 2) throw InputError(where, "expected " + shown(w[0]) + " SECONDS");
      if (pattern.loop_line > 0) throw InputError(where, "a second LOOPAFTER or PERIODICITY");
      pattern.loop_line = number;
      const Nanos value = read_seconds(w[1], where, w[0]);
      (w[0] == "LOOPAFTER" ? pattern.loop_delay : periodicity) = value;
      return true;
    }
    if (w[0] == "STOCHASTIC" || w[0] == "DET" || w[0] == "NORM" || w[0] == "UNIF" ||
        w[0] == "EXP") {
      throw InputError(where, "stochastic profiles are not supported, expected `date value` lines");
    }
    if (w.size() != 2) {
      throw InputError(where, "expected `date value` (2 columns), got " + std::to_string(w.size()));
    }
    const Nanos date = read_seconds(w[0], where, "date");
    if (!pattern.points.empty() && date < pattern.points.back().date) {
      throw InputError(where, "time goes backwards: " + format_seconds(date) + " s after " +
                                  format_seconds(pattern.points.back().date) + " s");
    }
    const double value = parse_double(w[1], where);
    if (value != 0 && value != 1) {
      throw InputError(where, "expected the value 0 (down) or 1 (up), got " + shown(w[1]));
    }
    pattern.points.push_back({date, value == 1, number});
    return true;
  });
  if (periodicity) {
    const Nanos last = pattern.points.empty() ? 0 : pattern.points.back().date;
    if (*periodicity < last) {
      throw InputError(
          profile.source + ":" + std::to_string(pattern.loop_line),
          "PERIODICITY is shorter than the pattern (last date " + format_seconds(last) + " s)");
    }
    pattern.loop_delay = *periodicity - last;
  }
  return pattern;
}

struct StateChange {
  Nanos time = 0;
  NodeId node = 0;
  EventKind kind = EventKind::kDown;
  std::size_t profile = 0;
  std::size_t line = 0;
};

/// The node's state changes, the pattern unrolled until `horizon` when it loops, within
/// kMaxProfilePeriods and kMaxProfileChanges.
void unroll(const Pattern& pattern, const SimGridProfile& profile, NodeId node,
            std::size_t profile_index, Nanos horizon, std::vector<StateChange>& out) {
  bool on = true;
  const Nanos period = pattern.loop_delay && !pattern.points.empty()
                           ? pattern.points.back().date + *pattern.loop_delay
                           : 0;
  const auto too_many = [&](const std::string& what) {
    return InputError(profile.source + ":" + std::to_string(pattern.loop_line),
                      "the profile repeats every " + format_seconds(period) +
                          " s: unrolled up to --days (" + format_seconds(horizon) +
                          " s) it makes more than " + what +
                          " (the limit for one looping profile); give fewer --days or a longer "
                          "period");
  };
  // Every pass of the loop moves time on by one period: refuse up front what would take more
  // passes than a profile may make (a period of nanoseconds over weeks).
  if (period > 0 && horizon / period >= kMaxProfilePeriods) {
    throw too_many(std::to_string(kMaxProfilePeriods) + " periods");
  }
  const std::size_t first = out.size();
  for (Nanos offset = 0;; offset += period) {
    for (const DatedState& point : pattern.points) {
      const Nanos time = offset + point.date;
      if (offset > 0 && time > horizon) return;
      if (point.on != on) {
        if (offset > 0 && out.size() - first >= static_cast<std::size_t>(kMaxProfileChanges)) {
          throw too_many(std::to_string(kMaxProfileChanges) + " state changes");
        }
        out.push_back(
            {time, node, point.on ? EventKind::kUp : EventKind::kDown, profile_index, point.line});
      }
      on = point.on;
      if (static_cast<std::int64_t>(out.size()) > kMaxEvents) {
        throw InputError("--days", "unrolling the profiles makes more than " +
                                       std::to_string(kMaxEvents) + " events");
      }
    }
    if (period == 0) return;  // not looping
  }
}

}  // namespace

LoadedTrace parse_simgrid(const std::vector<SimGridProfile>& profiles,
                          const ImportOptions& options) {
  TraceBuilder builder(TraceBuilder::Naming::kNamed, options.lenient);
  std::vector<StateChange> changes;
  Nanos end = 0;
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    const SimGridProfile& profile = profiles[i];
    const Pattern pattern = read_pattern(profile);
    require_writable(profile.node, profile.source, "node", false);
    const NodeId node = builder.named_node(profile.node);
    if (node != i) {
      throw InputError(profile.source, "a second profile for node '" + shown(profile.node) + "'");
    }
    if (pattern.loop_delay && options.duration < 0) {
      throw InputError(profile.source + ":" + std::to_string(pattern.loop_line),
                       "the profile loops: give --days to say how long to unroll it");
    }
    if (pattern.loop_delay && !pattern.points.empty() &&
        pattern.points.back().date + *pattern.loop_delay == 0) {
      throw InputError(profile.source + ":" + std::to_string(pattern.loop_line),
                       "the loop period is 0");
    }
    if (!pattern.points.empty()) end = std::max(end, pattern.points.back().date);
    unroll(pattern, profile, node, i, options.duration, changes);
  }
  // Merge the nodes' changes by time; at equal times, in profile order, each profile in its order.
  std::stable_sort(changes.begin(), changes.end(),
                   [](const StateChange& a, const StateChange& b) { return a.time < b.time; });
  for (const StateChange& change : changes) {
    if (options.duration >= 0 && change.time > options.duration) break;
    builder.add(change.time, change.node, change.kind, 0, profiles[change.profile].source,
                change.line);
  }
  builder.set_node_count(static_cast<std::int64_t>(profiles.size()), "simgrid profiles");
  builder.set_duration(options.duration >= 0 ? options.duration : end, "simgrid profiles");
  apply_declarations(options, builder);
  return std::move(builder).finish();
}

LoadedTrace read_simgrid(const std::string& path, const ImportOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      if (!entry.is_regular_file(ec) || entry.path().filename().string().starts_with(".")) continue;
      files.push_back(entry.path());
    }
    if (ec) throw InputError(path, "cannot list the directory: " + ec.message());
    if (files.empty()) throw InputError(path, "no profile files in the directory");
    std::sort(files.begin(), files.end());
  } else {
    files.emplace_back(path);
  }
  std::vector<SimGridProfile> profiles;
  for (const fs::path& file : files) {
    profiles.push_back({file.stem().string(), file.string(), read_text_file(file.string())});
  }
  return parse_simgrid(profiles, options);
}

}  // namespace recycle::traces
