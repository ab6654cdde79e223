// How busy the machine was with work other than this process while a run was measured: the
// processor time every cpu spent busy (/proc/stat) less this process's own (/proc/self/stat),
// over the wall time between two samples. A measurement on a machine that other processes keep
// busy includes waiting for them; validate says so instead of reporting the wait as the model's
// error.
#pragma once

#include <cstdint>
#include <optional>

namespace recycle::executor {

struct LoadSample {
  std::int64_t busy_ticks = 0;  ///< every cpu's busy time (user, nice, system, irq, softirq, steal)
  std::int64_t own_ticks = 0;   ///< this process's (utime + stime, every thread)
  std::int64_t wall_ns = 0;     ///< the steady clock
};

/// The sample now; nullopt where /proc cannot be read (not Linux, a restricted container).
[[nodiscard]] std::optional<LoadSample> sample_load();

/// The cores other processes kept busy on average between `before` and `after` (0 when no time
/// passed; never negative).
[[nodiscard]] double others_busy_cores(const LoadSample& before, const LoadSample& after);

/// The same from the counters themselves, at `ticks_per_second` clock ticks a second: what
/// others_busy_cores computes, apart from reading the system's tick rate.
[[nodiscard]] double others_busy_cores(const LoadSample& before, const LoadSample& after,
                                       double ticks_per_second);

}  // namespace recycle::executor
