#include "sim/replay/step_table.hpp"

#include <cmath>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/parse.hpp"

namespace recycle::sim {

namespace {

constexpr double kMaxIterationSeconds = 1e6;

std::string pipelines_key(std::int64_t p, std::int64_t s) {
  return std::to_string(p) + "x" + std::to_string(s);
}

/// "16x8", "30" or "cluster:30", normalized (no leading zeros, no blanks); InputError otherwise.
std::string normalize(std::string_view key, const std::string& where) {
  const auto count = [&](std::string_view text) {
    const std::int64_t n = parse_int(trim(text), where);
    if (n < 1 || n > (std::int64_t{1} << 24)) {
      throw InputError(
          where, "expected a count from 1 to 16777216 in config '" + shown(std::string(key)) + "'");
    }
    return n;
  };
  constexpr std::string_view kCluster = "cluster:";
  if (trim(key).substr(0, kCluster.size()) == kCluster) {
    return "cluster:" + std::to_string(count(trim(key).substr(kCluster.size())));
  }
  const auto x = key.find('x');
  if (x == std::string_view::npos) return std::to_string(count(key));
  return pipelines_key(count(key.substr(0, x)), count(key.substr(x + 1)));
}

}  // namespace

std::optional<StepRow> StepTable::find(const std::string& key) const {
  const auto it = by_key_.find(key);
  if (it == by_key_.end()) return std::nullopt;
  return it->second;
}

std::optional<StepRow> StepTable::pipelines(std::int64_t live_pipelines,
                                            std::int64_t stages) const {
  return find(pipelines_key(live_pipelines, stages));
}

std::optional<StepRow> StepTable::nodes(std::int64_t live_nodes) const {
  return find(std::to_string(live_nodes));
}

std::optional<StepRow> StepTable::cluster_nodes(std::int64_t live_nodes) const {
  return find("cluster:" + std::to_string(live_nodes));
}

StepTable StepTable::parse(const std::string& text, const std::string& source) {
  const std::vector<CsvRow> rows = parse_csv(text, source);
  if (rows.empty())
    throw InputError(source, "empty step table: expected a header config,iteration_s");
  const CsvRow& header = rows.front();
  if (header.fields.size() != 2 || trim(header.fields[0]) != "config" ||
      trim(header.fields[1]) != "iteration_s") {
    throw InputError(header.where(source), "expected the header config,iteration_s");
  }
  StepTable table;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const CsvRow& row = rows[i];
    const std::string where = row.where(source);
    if (row.fields.size() != 2) throw InputError(where, "expected 2 fields: config,iteration_s");
    const std::string key = normalize(row.fields[0], where);
    StepRow step;
    if (trim(row.fields[1]) != "none") {
      const auto bad = [&] {
        return InputError(where, "iteration_s must be none or a number > 0 and at most 1e6, got '" +
                                     shown(row.fields[1]) + "'");
      };
      double s = 0;
      try {
        s = parse_double(trim(row.fields[1]), where);
      } catch (const InputError&) {
        throw bad();
      }
      if (!std::isfinite(s) || s <= 0 || s > kMaxIterationSeconds) throw bad();
      step.period = positive_nanos(s, row.fields[1], where);
    }
    if (!table.by_key_.emplace(key, step).second) {
      throw InputError(where, "config " + key + " is given twice");
    }
  }
  return table;
}

StepTable StepTable::load(const std::string& path) {
  return parse(read_text_file(path), path);
}

}  // namespace recycle::sim
