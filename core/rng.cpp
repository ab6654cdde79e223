#include "core/rng.hpp"

#include <cmath>
#include <numbers>

namespace recycle {

namespace {
__extension__ using Uint128 = unsigned __int128;

std::uint64_t splitmix64(std::uint64_t& x) noexcept {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
std::uint64_t rotl(std::uint64_t x, int k) noexcept {
  return (x << k) | (x >> (64 - k));
}
}  // namespace

Rng::Rng(std::uint64_t seed) noexcept {
  for (auto& word : s_) word = splitmix64(seed);
}

std::uint64_t Rng::next() noexcept {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() noexcept {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

std::uint64_t Rng::below(std::uint64_t n) noexcept {
  // Lemire's multiply-shift with rejection: unbiased.
  while (true) {
    const Uint128 m = static_cast<Uint128>(next()) * n;
    const auto low = static_cast<std::uint64_t>(m);
    if (low >= n || low >= (-n) % n) return static_cast<std::uint64_t>(m >> 64);
  }
}

double Rng::exponential(double mean) noexcept {
  return -mean * std::log1p(-uniform());
}

double Rng::normal(double mean, double stddev) noexcept {
  const double u1 = 1.0 - uniform();  // (0, 1]
  const double u2 = uniform();
  return mean + stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double Rng::weibull(double shape, double scale) noexcept {
  return scale * std::pow(-std::log1p(-uniform()), 1.0 / shape);
}

}  // namespace recycle
