#include "executor/machine_load.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

namespace recycle::executor {

namespace {

/// The first line of /proc/stat: "cpu user nice system idle iowait irq softirq steal ...".
std::optional<std::int64_t> busy_ticks() {
  std::ifstream in("/proc/stat");
  std::string label;
  std::int64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
               steal = 0;
  if (!(in >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) ||
      label != "cpu") {
    return std::nullopt;
  }
  return user + nice + system + irq + softirq + steal;
}

/// Fields 14 and 15 of /proc/self/stat (utime, stime), after the command name in parentheses.
std::optional<std::int64_t> own_ticks() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  std::string field;
  // Fields 3..13 (state .. cmajflt), then utime and stime.
  for (int k = 3; k <= 13; ++k) {
    if (!(rest >> field)) return std::nullopt;
  }
  std::int64_t utime = 0, stime = 0;
  if (!(rest >> utime >> stime)) return std::nullopt;
  return utime + stime;
}

}  // namespace

std::optional<LoadSample> sample_load() {
  const auto busy = busy_ticks();
  const auto own = own_ticks();
  if (!busy || !own) return std::nullopt;
  return LoadSample{*busy, *own,
                    std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count()};
}

double others_busy_cores(const LoadSample& before, const LoadSample& after,
                         double ticks_per_second) {
  const double wall_s = static_cast<double>(after.wall_ns - before.wall_ns) * 1e-9;
  if (wall_s <= 0 || ticks_per_second <= 0) return 0;
  const auto others = (after.busy_ticks - before.busy_ticks) - (after.own_ticks - before.own_ticks);
  return std::max(0.0, static_cast<double>(others) / ticks_per_second / wall_s);
}

double others_busy_cores(const LoadSample& before, const LoadSample& after) {
  return others_busy_cores(before, after, static_cast<double>(sysconf(_SC_CLK_TCK)));
}

}  // namespace recycle::executor
