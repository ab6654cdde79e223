#include <doctest/doctest.h>

#include <cmath>

#include "core/rng.hpp"

TEST_CASE("Rng: the same seed gives the same stream, another seed another") {
  recycle::Rng a(7), b(7), c(8);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next();
    CHECK(x == b.next());
    differs = differs || x != c.next();
  }
  CHECK(differs);
}

TEST_CASE("Rng: first output of xoshiro256** seeded by splitmix64(0)") {
  // splitmix64 from state 0 gives e220a8397b1dcdaf, 6e789e6aa1b965f4, 06c45d188009454f,
  // f88bb8a8724c81ec (Vigna's reference); xoshiro256** returns rotl(s1 * 5, 7) * 9.
  const std::uint64_t s1 = 0x6e789e6aa1b965f4ULL;
  const std::uint64_t x = s1 * 5;
  const std::uint64_t expected = ((x << 7) | (x >> 57)) * 9;
  recycle::Rng rng(0);
  CHECK(rng.next() == expected);
}

TEST_CASE("Rng: sample means match the distributions' means") {
  recycle::Rng rng(12345);
  const int n = 200000;
  double uniform = 0, expo = 0, normal = 0, weibull = 0;
  for (int i = 0; i < n; ++i) {
    uniform += rng.uniform();
    expo += rng.exponential(3.0);
    normal += rng.normal(5.0, 2.0);
    weibull += rng.weibull(0.7, 10.0);
  }
  // Standard errors: uniform 0.29/sqrt(n), exponential 3/sqrt(n), normal 2/sqrt(n); 5 sigma bounds.
  CHECK(std::fabs(uniform / n - 0.5) < 5 * 0.289 / std::sqrt(n));
  CHECK(std::fabs(expo / n - 3.0) < 5 * 3.0 / std::sqrt(n));
  CHECK(std::fabs(normal / n - 5.0) < 5 * 2.0 / std::sqrt(n));
  // Weibull mean = scale * Gamma(1 + 1/k); sd = scale * sqrt(Gamma(1+2/k) - Gamma(1+1/k)^2).
  const double mean = 10.0 * std::tgamma(1 + 1 / 0.7);
  const double sd =
      10.0 * std::sqrt(std::tgamma(1 + 2 / 0.7) - std::pow(std::tgamma(1 + 1 / 0.7), 2));
  CHECK(std::fabs(weibull / n - mean) < 5 * sd / std::sqrt(n));
}

TEST_CASE("Rng::below stays in range and covers it") {
  recycle::Rng rng(3);
  int seen[7] = {};
  for (int i = 0; i < 7000; ++i) {
    const auto v = rng.below(7);
    REQUIRE(v < 7);
    ++seen[v];
  }
  for (int count : seen) CHECK(count > 800);  // expected 1000 each
}
