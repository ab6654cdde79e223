#include "planner/language/failures.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "core/parse.hpp"

namespace recycle::planner {

namespace {

/// "0:3,0:5,1:2" for sorted workers.
std::string key_of(const std::vector<WorkerId>& failed) {
  std::string key;
  for (const WorkerId& w : failed) {
    key += (key.empty() ? "" : ",") + std::to_string(w.dp) + ":" + std::to_string(w.stage);
  }
  return key;
}

}  // namespace

std::vector<WorkerId> parse_failures(const std::string& text, const Layout& layout,
                                     const std::string& flag) {
  std::vector<WorkerId> failed;
  if (trim(text).empty()) return failed;
  for (const std::string_view item : split(text, ',')) {
    const auto parts = split(item, ':');
    if (parts.size() != 2) {
      throw InputError(
          flag, "expected DP:STAGE pairs separated by commas, got '" + std::string(item) + "'");
    }
    const std::int64_t dp = parse_int(parts[0], flag);
    const std::int64_t stage = parse_int(parts[1], flag);
    if (dp < 0 || dp >= layout.dp || stage < 0 || stage >= layout.pp) {
      throw InputError(flag, "worker " + std::string(trim(item)) +
                                 " is outside the layout (dp 0.." + std::to_string(layout.dp - 1) +
                                 ", stage 0.." + std::to_string(layout.pp - 1) + ")");
    }
    failed.push_back({static_cast<std::int32_t>(dp), static_cast<std::int32_t>(stage)});
  }
  std::sort(failed.begin(), failed.end());
  const auto dup = std::adjacent_find(failed.begin(), failed.end());
  if (dup != failed.end()) {
    throw InputError(flag, "worker " + std::to_string(dup->dp) + ":" + std::to_string(dup->stage) +
                               " is listed twice");
  }
  return failed;
}

CanonicalFailures canonicalize(const std::vector<WorkerId>& failed, const Layout& layout) {
  std::vector<std::vector<std::int32_t>> stages(static_cast<std::size_t>(layout.dp));
  for (const WorkerId& w : failed) stages[static_cast<std::size_t>(w.dp)].push_back(w.stage);
  for (auto& s : stages) std::sort(s.begin(), s.end());
  CanonicalFailures c;
  c.to_original.resize(static_cast<std::size_t>(layout.dp));
  std::iota(c.to_original.begin(), c.to_original.end(), 0);
  std::stable_sort(c.to_original.begin(), c.to_original.end(), [&](std::int32_t a, std::int32_t b) {
    const auto& sa = stages[static_cast<std::size_t>(a)];
    const auto& sb = stages[static_cast<std::size_t>(b)];
    if (sa.size() != sb.size()) return sa.size() > sb.size();
    return sa < sb;
  });
  c.to_canonical.resize(static_cast<std::size_t>(layout.dp));
  for (std::size_t i = 0; i < c.to_original.size(); ++i) {
    c.to_canonical[static_cast<std::size_t>(c.to_original[i])] = static_cast<std::int32_t>(i);
  }
  for (const WorkerId& w : failed)
    c.failed.push_back({c.to_canonical[static_cast<std::size_t>(w.dp)], w.stage});
  std::sort(c.failed.begin(), c.failed.end());
  c.key = key_of(c.failed);
  return c;
}

CanonicalFailures keep_labels(const std::vector<WorkerId>& failed, const Layout& layout) {
  CanonicalFailures c;
  c.to_original.resize(static_cast<std::size_t>(layout.dp));
  std::iota(c.to_original.begin(), c.to_original.end(), 0);
  c.to_canonical = c.to_original;
  c.failed = failed;
  std::sort(c.failed.begin(), c.failed.end());
  c.key = key_of(c.failed);
  return c;
}

Schedule relabel(const Schedule& schedule, const std::vector<std::int32_t>& to_new) {
  const auto map = [&](std::int32_t d) { return to_new[static_cast<std::size_t>(d)]; };
  Schedule out = schedule;
  for (WorkerId& w : out.failed) w.dp = map(w.dp);
  std::sort(out.failed.begin(), out.failed.end());
  for (Route& r : out.routes) {
    r.owner = map(r.owner);
    r.dp = map(r.dp);
  }
  std::sort(out.routes.begin(), out.routes.end());
  for (WorkerSchedule& w : out.workers) {
    w.id.dp = map(w.id.dp);
    for (Action& a : w.actions) a.owner = map(a.owner);
  }
  std::sort(out.workers.begin(), out.workers.end(),
            [](const WorkerSchedule& a, const WorkerSchedule& b) { return a.id < b.id; });
  return out;
}

std::int32_t dead_stage(const std::vector<WorkerId>& failed, const Layout& layout) {
  std::vector<std::int32_t> count(static_cast<std::size_t>(layout.pp), 0);
  for (const WorkerId& w : failed) ++count[static_cast<std::size_t>(w.stage)];
  for (std::int32_t s = 0; s < layout.pp; ++s) {
    if (count[static_cast<std::size_t>(s)] >= layout.dp) return s;
  }
  return -1;
}

}  // namespace recycle::planner
