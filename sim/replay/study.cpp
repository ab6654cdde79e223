#include "sim/replay/study.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/digest.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "core/parse.hpp"
#include "planner/job_model.hpp"
#include "profiles/job.hpp"
#include "sim/replay/replay.hpp"
#include "sim/replay/shared_plans.hpp"
#include "sim/replay/trace_on_cluster.hpp"
#include "traces/generator.hpp"
#include "traces/native_csv.hpp"
#include "traces/presets.hpp"

namespace recycle::sim {

namespace {

constexpr std::int64_t kMaxPoints = 1'000'000;

/// A value as the JSON it reads as (a number, true/false), else as a string.
nlohmann::json value_of(const std::string& text) {
  try {
    nlohmann::json v = nlohmann::json::parse(text);
    if (v.is_number() || v.is_boolean()) return v;
  } catch (const nlohmann::json::exception&) {
  }
  return text;
}

/// The axis values of point `index` (the last axis moves fastest), one per key.
std::vector<std::pair<std::string, std::string>> point_values(const std::vector<SweepAxis>& axes,
                                                              std::int64_t index) {
  std::vector<std::pair<std::string, std::string>> out;
  std::vector<std::size_t> digits(axes.size());
  for (std::size_t a = axes.size(); a-- > 0;) {
    const auto n = static_cast<std::int64_t>(axes[a].values.size());
    digits[a] = static_cast<std::size_t>(index % n);
    index /= n;
  }
  for (std::size_t a = 0; a < axes.size(); ++a) {
    for (std::size_t k = 0; k < axes[a].keys.size(); ++k) {
      out.emplace_back(axes[a].keys[k], axes[a].values[digits[a]][k]);
    }
  }
  return out;
}

std::vector<std::string> columns(const std::vector<SweepAxis>& axes) {
  std::vector<std::string> out{"point"};
  for (const SweepAxis& axis : axes) out.insert(out.end(), axis.keys.begin(), axis.keys.end());
  for (const char* c :
       {"seed", "policy", "samples", "goodput", "ettr", "mean_throughput_samples_per_s"}) {
    out.emplace_back(c);
  }
  for (std::size_t c = 0; c < kLostCauses; ++c) {
    out.push_back("lost_" + std::string(to_string(static_cast<LostCause>(c))) + "_s");
  }
  for (const char* c : {"gpu_hours", "failures", "restarts_from_checkpoint"}) out.emplace_back(c);
  return out;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

/// What every row depends on: the job, the grid's values, the trace (its events, or the preset and
/// days), its mapping and the step table. Shards of one study share it; merge_study refuses to
/// join files that differ in it.
std::string inputs_digest(const StudyOptions& o) {
  Digest d;
  d.add(o.job.dump());
  for (const SweepAxis& axis : o.axes) {
    d.add(join(axis.keys));
    for (const std::vector<std::string>& value : axis.values) d.add(join(value));
  }
  d.add(o.preset).add(fmt::format("{} {:.17g}", o.seeds, o.days));
  d.add(o.trace ? traces::format_native_csv(*o.trace) : "");
  d.add(o.map ? fmt::format("{} {}", to_string(o.map->mode), o.map->seed) : "");
  if (o.table != nullptr) {
    for (const auto& [key, row] : o.table->rows()) {
      d.add(row.period ? fmt::format("{} {}", key, *row.period) : key + " none");
    }
  }
  return d.hex();
}

std::string preamble(const StudyOptions& o) {
  std::vector<std::string> names;
  for (const PolicyKind p : o.policies) names.emplace_back(to_string(p));
  const std::string trace = o.preset.empty() ? "a trace file" : "preset " + o.preset;
  return fmt::format(
      "# recycle study: {} points x {} seeds x {} policies ({}) on {}\n"
      "# inputs: {} (FNV-1a of the job, grid, trace, mapping and step table)\n{}\n",
      study_points(o.axes), o.preset.empty() ? 1 : o.seeds, o.policies.size(), join(names), trace,
      inputs_digest(o), join(columns(o.axes)));
}

/// The rows of one point.
std::string run_point(const StudyOptions& o, std::int64_t index) {
  const auto values = point_values(o.axes, index);
  std::string label;
  nlohmann::json job = o.job;
  traces::GeneratorOptions generator;
  if (!o.preset.empty()) {
    generator = traces::find_generator_preset(o.preset, "--trace-preset").options;
    generator.days = o.days;
  }
  for (const auto& [key, value] : values) {
    label += (label.empty() ? "" : ", ") + key + "=" + value;
    if (key == "rate" || key == "days") {
      (key == "rate" ? generator.rate : generator.days) = parse_double(value, "--sweep " + key);
      continue;
    }
    if (key == "burst") {
      // Failure concentration: with probability P a failure takes K more nodes down with it.
      generator.burst = traces::BurstModel::parse(value, "--sweep burst");
      continue;
    }
    nlohmann::json* at = &job;
    for (const std::string_view part : split(key, '.')) {
      if (!at->is_object()) *at = nlohmann::json::object();
      at = &(*at)[std::string(part)];
    }
    *at = value_of(value);
  }
  const std::string source = fmt::format("{} (point {}: {})", o.job_source, index, label);
  const profiles::Job parsed = profiles::job_from_json(job, source);
  const planner::JobModel model = planner::job_model(parsed);
  planner::require_runnable(model);
  const std::int64_t nodes = parsed.resilience.cluster.nodes;

  std::string rows;
  const std::int64_t seeds = o.preset.empty() ? 1 : o.seeds;
  SharedPlans plans;  // the point's seeds replay one model: a set that recurs is planned once
  for (std::int64_t seed = 1; seed <= seeds; ++seed) {
    traces::Trace trace;
    ReplayOptions options;
    options.policies = o.policies;
    options.table = o.table;
    options.shared_plans = &plans;
    if (o.preset.empty()) {
      trace = trace_on_cluster(*o.trace, o.map, nodes, fmt::format("point {} ({})", index, label));
      options.duration = replay_duration(trace, o.days);
    } else {
      generator.nodes = nodes;
      generator.seed = static_cast<std::uint64_t>(seed);
      try {
        traces::validate(generator);
      } catch (const InputError& e) {
        // A generator value the sweep set is the sweep's, not the flag's the user never gave.
        const std::string flag = e.where().starts_with("--") ? e.where().substr(2) : "";
        const bool swept = std::any_of(values.begin(), values.end(),
                                       [&](const auto& kv) { return kv.first == flag; });
        if (!swept) throw;
        throw InputError("--sweep " + flag,
                         fmt::format("point {} ({}): {}", index, label, e.problem()));
      }
      trace = traces::generate_trace(generator);
    }
    const ReplayResult r = replay(model, trace, options);
    for (const PolicyResult& p : r.policies) {
      std::vector<std::string> cells{std::to_string(index)};
      for (const auto& kv : values) cells.push_back(kv.second);
      cells.push_back(std::to_string(seed));
      cells.emplace_back(to_string(p.policy));
      for (const double x : {p.samples, p.goodput, p.ettr, p.mean_throughput}) {
        cells.push_back(fmt::format("{:.9g}", x));
      }
      for (const double x : p.lost_s) cells.push_back(fmt::format("{:.9g}", x));
      cells.push_back(fmt::format("{:.9g}", p.gpu_hours));
      cells.push_back(std::to_string(p.failures));
      cells.push_back(std::to_string(p.fallbacks));
      rows += join(cells) + "\n";
    }
  }
  return rows;
}

}  // namespace

SweepAxis parse_sweep(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw InputError("--sweep",
                     "expected KEY=V1,V2,... (or K1/K2=A1/A2,...), got '" + shown(text) + "'");
  }
  SweepAxis axis;
  std::set<std::vector<std::string>> given;
  for (const std::string_view key : split(std::string_view(text).substr(0, eq), '/')) {
    const std::string k(trim(key));
    if (k.empty() || k.find_first_of(", \"") != std::string::npos ||
        std::any_of(k.begin(), k.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
      throw InputError("--sweep", "bad key '" + shown(k) + "' in '" + shown(text) + "'");
    }
    axis.keys.push_back(k);
  }
  for (const std::string_view value : split(std::string_view(text).substr(eq + 1), ',')) {
    std::vector<std::string> parts;
    for (const std::string_view part : split(value, '/')) parts.emplace_back(trim(part));
    // A value is written as a CSV cell and read back by `study merge`: no quote or control
    // character (a newline would split its row).
    for (const std::string& p : parts) {
      if (std::any_of(p.begin(), p.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }) ||
          p.find('"') != std::string::npos) {
        throw InputError("--sweep", "value '" + shown(p) + "' in '" + shown(text) +
                                        "' holds a quote or a control character, which a CSV "
                                        "cell cannot carry");
      }
    }
    if (parts.size() != axis.keys.size() ||
        std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); })) {
      throw InputError("--sweep", fmt::format("'{}' gives {} keys, so every value needs {} "
                                              "non-empty parts separated by '/'",
                                              shown(text), axis.keys.size(), axis.keys.size()));
    }
    // A value given twice would run the same points twice, as a policy listed twice would.
    if (!given.insert(parts).second) {
      throw InputError("--sweep", "'" + shown(std::string(trim(value))) + "' is given twice in '" +
                                      shown(text) + "'");
    }
    axis.values.push_back(std::move(parts));
  }
  return axis;
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos)
    throw InputError("--shard", "expected I/N, got '" + shown(text) + "'");
  Shard s;
  s.index = parse_int(text.substr(0, slash), "--shard");
  s.count = parse_int(text.substr(slash + 1), "--shard");
  if (s.count < 1 || s.count > kMaxPoints || s.index < 0 || s.index >= s.count) {
    throw InputError("--shard",
                     "expected I/N with 0 <= I < N <= 1000000, got '" + shown(text) + "'");
  }
  return s;
}

std::int64_t study_points(const std::vector<SweepAxis>& axes) {
  std::int64_t n = 1;
  for (const SweepAxis& a : axes) {
    n *= static_cast<std::int64_t>(a.values.size());
    if (n > kMaxPoints) throw InputError("--sweep", "more than 1,000,000 grid points");
  }
  return n;
}

std::string run_study(const StudyOptions& o) {
  const std::int64_t points = study_points(o.axes);
  std::vector<std::string> swept;
  for (const SweepAxis& axis : o.axes) {
    for (const std::string& key : axis.keys) {
      if ((key == "rate" || key == "days" || key == "burst") && o.preset.empty()) {
        throw InputError("--sweep", "'" + key + "' needs --trace-preset (it sets the generator)");
      }
      // A key swept twice would be set twice per point, the last value silently winning.
      if (std::find(swept.begin(), swept.end(), key) != swept.end())
        throw InputError("--sweep", "'" + key + "' is swept twice; give its values once");
      swept.push_back(key);
    }
  }
  std::vector<std::int64_t> mine;
  for (std::int64_t i = o.shard.index; i < points; i += o.shard.count) mine.push_back(i);
  const std::vector<std::string> rows = parallel_map(
      mine.size(), [&](std::size_t i) { return run_point(o, mine[i]); }, o.threads);
  std::string out = preamble(o);
  for (const std::string& r : rows) out += r;
  return out;
}

namespace {

/// What the first line of a study file says: "# recycle study: P points x S seeds x K policies
/// (a,b,...) on TRACE", as preamble() writes it. Each count at most kMaxPoints, K the listed count.
struct StudyHead {
  std::int64_t points = 0, seeds = 0;
  std::vector<std::string> policies;
};

StudyHead parse_head(std::string_view first, const std::string& path) {
  const std::string where = path + ":1";
  const auto bad = [&](const std::string& what) {
    return InputError(where, what +
                                 " (expected '# recycle study: P points x S seeds x K policies "
                                 "(a,b,...) on ...')");
  };
  const std::vector<std::string_view> words = split(first, ' ');
  if (words.size() < 11 || words[4] != "points" || words[5] != "x" || words[7] != "seeds" ||
      words[8] != "x" || words[10] != "policies")
    throw bad("not a study's first line");
  const auto count = [&](std::string_view text, const char* what) {
    const std::int64_t n = parse_int(text, where);
    if (n < 1 || n > kMaxPoints)
      throw bad(fmt::format("{} {} is not in 1..{}", what, n, kMaxPoints));
    return n;
  };
  StudyHead h;
  h.points = count(words[3], "points");
  h.seeds = count(words[6], "seeds");
  const std::int64_t k = count(words[9], "policies");
  const auto open = first.find('(');
  const auto close = first.find(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    throw bad("no policy list");
  for (const std::string_view p : split(first.substr(open + 1, close - open - 1), ',')) {
    if (p.empty() || std::find(h.policies.begin(), h.policies.end(), p) != h.policies.end())
      throw bad("an empty or repeated policy in its list");
    h.policies.emplace_back(p);
  }
  if (static_cast<std::int64_t>(h.policies.size()) != k)
    throw bad(fmt::format("{} policies counted but {} listed", k, h.policies.size()));
  return h;
}

/// The position of `name` in a study file's header (its third line), refused when absent.
std::size_t column_of(const std::vector<std::string_view>& header, std::string_view name,
                      const std::string& path) {
  const auto at = std::find(header.begin(), header.end(), name);
  if (at == header.end())
    throw InputError(path + ":3", "the header has no '" + std::string(name) + "' column");
  return static_cast<std::size_t>(at - header.begin());
}

}  // namespace

std::string merge_study(const std::vector<std::pair<std::string, std::string>>& files) {
  if (files.empty()) throw InputError("merge", "no files to merge");
  std::string head;
  std::vector<std::string> policies;
  std::int64_t points = 0, seeds = 0, expected = 0;
  // Rows by (point, seed, policy position).
  std::map<std::tuple<std::int64_t, std::int64_t, std::size_t>, std::string> rows;
  for (const auto& [path, text] : files) {
    std::vector<std::string_view> lines = split(text, '\n');
    if (!lines.empty() && lines.back().empty()) lines.pop_back();
    constexpr std::size_t kHead = 3;  // the grid, the inputs' digest, the header
    if (lines.size() < kHead || !lines[0].starts_with("# recycle study: ") ||
        !lines[1].starts_with("# inputs: ")) {
      throw InputError(path, "not a recycle study file (expected its first three lines)");
    }
    std::string this_head;
    for (std::size_t i = 0; i < kHead; ++i) this_head += std::string(lines[i]) + "\n";
    if (head.empty()) {
      head = this_head;
      const StudyHead h = parse_head(lines[0], path);
      policies = h.policies;
      points = h.points;
      seeds = h.seeds;
      expected = points * seeds * static_cast<std::int64_t>(policies.size());
    } else if (this_head != head) {
      throw InputError(path,
                       "a different study (its first three lines, which name its grid and "
                       "inputs, differ from " +
                           files.front().first + "'s)");
    }
    const std::vector<std::string_view> header = split(lines[2], ',');
    const std::size_t seed_column = column_of(header, "seed", path);
    const std::size_t policy_column = column_of(header, "policy", path);
    if (column_of(header, "point", path) != 0)
      throw InputError(path + ":3", "the header must start with the 'point' column");
    for (std::size_t i = kHead; i < lines.size(); ++i) {
      const std::string where = path + ":" + std::to_string(i + 1);
      const std::vector<std::string_view> cells = split(lines[i], ',');
      if (cells.size() != header.size()) throw InputError(where, "expected one cell per column");
      const auto policy = static_cast<std::size_t>(
          std::find(policies.begin(), policies.end(), cells[policy_column]) - policies.begin());
      if (policy == policies.size()) throw InputError(where, "unknown policy");
      const auto key =
          std::make_tuple(parse_int(cells[0], where), parse_int(cells[seed_column], where), policy);
      if (std::get<0>(key) < 0 || std::get<0>(key) >= points)
        throw InputError(where, fmt::format("point {} is not one of the study's 0..{}",
                                            std::get<0>(key), points - 1));
      if (std::get<1>(key) < 1 || std::get<1>(key) > seeds)
        throw InputError(
            where, fmt::format("seed {} is not one of the study's 1..{}", std::get<1>(key), seeds));
      if (!rows.emplace(key, std::string(lines[i])).second) {
        throw InputError(where, "this point, seed and policy is in another file too");
      }
    }
  }
  if (static_cast<std::int64_t>(rows.size()) != expected) {
    throw InputError(files.front().first,
                     fmt::format("the files hold {} rows of the study's {}: a shard is missing",
                                 rows.size(), expected));
  }
  std::string out = head;
  for (const auto& [key, row] : rows) out += row + "\n";
  return out;
}

}  // namespace recycle::sim
