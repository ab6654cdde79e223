// Maximum-likelihood fits, checked against their defining equations and against known samples.
#include "traces/fits.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/rng.hpp"

namespace recycle::traces {
namespace {

TEST_CASE("the Weibull fit solves the likelihood equations") {
  // For samples x, the MLE (k, lambda) satisfies
  //   sum(x^k ln x) / sum(x^k) - 1/k - mean(ln x) = 0   and   lambda^k = mean(x^k).
  const std::vector<double> x = {1, 2, 4, 8, 3.5};
  const auto fit = fit_weibull(x);
  REQUIRE(fit);
  double sxk = 0, sxkl = 0, sl = 0;
  for (const double v : x) {
    sxk += std::pow(v, fit->shape);
    sxkl += std::pow(v, fit->shape) * std::log(v);
    sl += std::log(v);
  }
  const double n = static_cast<double>(x.size());
  CHECK(sxkl / sxk - 1 / fit->shape - sl / n == doctest::Approx(0).epsilon(1e-12));
  CHECK(std::pow(fit->scale, fit->shape) == doctest::Approx(sxk / n).epsilon(1e-12));
}

TEST_CASE("the Weibull fit is scale-equivariant and undefined for fewer than 2 distinct samples") {
  const std::vector<double> x = {0.5, 1.5, 2.0, 9.0};
  std::vector<double> y;
  for (const double v : x) y.push_back(3600 * v);
  const auto fx = fit_weibull(x);
  const auto fy = fit_weibull(y);
  REQUIRE(fx);
  REQUIRE(fy);
  CHECK(fy->shape == doctest::Approx(fx->shape).epsilon(1e-10));
  CHECK(fy->scale == doctest::Approx(3600 * fx->scale).epsilon(1e-10));
  CHECK_FALSE(fit_weibull(std::vector<double>{2.0}));
  CHECK_FALSE(fit_weibull(std::vector<double>{2.0, 2.0, 2.0}));
}

TEST_CASE("the Weibull fit recovers the law of a large sample") {
  // 20,000 draws: the MLE's standard error on k is about 0.78 k / sqrt(n) = 0.4 % of k.
  for (const double shape : {0.5, 0.7, 1.0, 2.5}) {
    CAPTURE(shape);
    Rng rng(11);
    std::vector<double> x;
    for (int i = 0; i < 20'000; ++i) x.push_back(rng.weibull(shape, 5.0));
    const auto fit = fit_weibull(x);
    REQUIRE(fit);
    CHECK(fit->shape == doctest::Approx(shape).epsilon(0.03));
    CHECK(fit->scale == doctest::Approx(5.0).epsilon(0.03));
  }
}

TEST_CASE("the lognormal fit is the mean and standard deviation of the logs") {
  // ln x = {1, 3}: mean 2, standard deviation (divided by n) 1.
  const auto fit = fit_lognormal(std::vector<double>{std::exp(1.0), std::exp(3.0)});
  REQUIRE(fit);
  CHECK(fit->mu == doctest::Approx(2.0));
  CHECK(fit->sigma == doctest::Approx(1.0));
  CHECK_FALSE(fit_lognormal(std::vector<double>{}));
}

}  // namespace
}  // namespace recycle::traces
