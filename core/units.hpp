// Unit types. Every quantity that crosses a function boundary carries its unit in its type name,
// so no reader has to guess whether a double is seconds or milliseconds.
#pragma once

#include <cmath>
#include <cstdint>

namespace recycle {

using Nanos = std::int64_t;     /// simulated time, nanoseconds
using Bytes = std::int64_t;     /// a size in bytes
using BytesPerSecond = double;  /// a bandwidth
using Seconds = double;         /// a duration read from or written to a user-facing file

inline constexpr Nanos kNanosPerSecond = 1'000'000'000;

/// The latest simulated time (2^61 ns, about 73 years): every duration is at most this, and a
/// schedule whose timing reaches it is refused (planner/language/execution_graph.hpp), so sums of
/// two such times never overflow Nanos.
inline constexpr Nanos kMaxClock = Nanos{1} << 61;

/// Rounds to the nearest nanosecond, saturating at +-kMaxClock; the one place seconds become
/// simulated time.
[[nodiscard]] inline Nanos to_nanos(Seconds s) noexcept {
  const double ns = s * static_cast<double>(kNanosPerSecond);
  if (ns >= static_cast<double>(kMaxClock)) return kMaxClock;
  if (ns <= -static_cast<double>(kMaxClock)) return -kMaxClock;
  return static_cast<Nanos>(std::llround(ns));
}

/// `time` x `count` (both >= 0) as simulated time, saturating at kMaxClock instead of overflowing:
/// a bound computed before the schedule's own timing refuses times past the clock.
[[nodiscard]] inline Nanos clock_times(Nanos time, std::int64_t count) noexcept {
  Nanos out = 0;
  if (__builtin_mul_overflow(time, count, &out) || out > kMaxClock) return kMaxClock;
  return out;
}

[[nodiscard]] inline constexpr Seconds to_seconds(Nanos ns) noexcept {
  return static_cast<Seconds>(ns) / static_cast<Seconds>(kNanosPerSecond);
}

}  // namespace recycle
