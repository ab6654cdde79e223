// A seeded random number generator whose output is the same on every platform and compiler:
// xoshiro256** seeded through splitmix64, with its own uniform, exponential, normal and Weibull
// draws (the standard library's distributions differ between implementations).
#pragma once

#include <array>
#include <cstdint>

namespace recycle {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) noexcept;

  /// 64 uniformly random bits.
  [[nodiscard]] std::uint64_t next() noexcept;
  /// Uniform in [0, 1), 53 bits of precision.
  [[nodiscard]] double uniform() noexcept;
  /// Uniform integer in [0, n); n > 0.
  [[nodiscard]] std::uint64_t below(std::uint64_t n) noexcept;
  /// Exponential with the given mean.
  [[nodiscard]] double exponential(double mean) noexcept;
  /// Normal (Box-Muller; one draw per call).
  [[nodiscard]] double normal(double mean, double stddev) noexcept;
  /// Weibull with shape k and scale lambda (inverse CDF).
  [[nodiscard]] double weibull(double shape, double scale) noexcept;

 private:
  std::array<std::uint64_t, 4> s_{};
};

}  // namespace recycle
