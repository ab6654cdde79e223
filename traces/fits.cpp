#include "traces/fits.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"

namespace recycle::traces {

namespace {

/// With y = ln x - mean(ln x), the shape k solves  sum(e^{ky} y) / sum(e^{ky}) - 1/k = 0.
/// Returns that left side and its derivative in k (a weighted variance of y plus 1/k^2 > 0, so the
/// left side increases with k and the root is unique).
std::pair<double, double> score(const std::vector<double>& y, double k) {
  double top = -INFINITY;
  for (const double v : y) top = std::max(top, k * v);
  double w_sum = 0, wy = 0, wyy = 0;
  for (const double v : y) {
    const double w = std::exp(k * v - top);
    w_sum += w;
    wy += w * v;
    wyy += w * v * v;
  }
  const double mean = wy / w_sum;
  return {mean - 1.0 / k, wyy / w_sum - mean * mean + 1.0 / (k * k)};
}

}  // namespace

std::optional<WeibullFit> fit_weibull(std::span<const double> samples) {
  if (samples.size() < 2) return std::nullopt;
  double mean_log = 0;
  for (const double x : samples) {
    RECYCLE_ASSERT(x > 0, "Weibull samples must be positive");
    mean_log += std::log(x);
  }
  mean_log /= static_cast<double>(samples.size());
  std::vector<double> y;
  y.reserve(samples.size());
  for (const double x : samples) y.push_back(std::log(x) - mean_log);
  const double spread =
      *std::max_element(y.begin(), y.end()) - *std::min_element(y.begin(), y.end());
  if (spread < 1e-12) return std::nullopt;

  // Bracket the root, then Newton steps that fall back to bisection when they leave the bracket.
  double lo = 1e-3, hi = 1.0;
  while (score(y, hi).first < 0) {
    lo = hi;
    hi *= 2;
    if (hi > 1e6) return std::nullopt;
  }
  double k = (lo + hi) / 2;
  for (int i = 0; i < 200; ++i) {
    const auto [f, df] = score(y, k);
    (f < 0 ? lo : hi) = k;
    double next = k - f / df;
    if (!(next > lo && next < hi)) next = (lo + hi) / 2;
    if (std::fabs(next - k) <= 1e-13 * k) {
      k = next;
      break;
    }
    k = next;
  }
  // scale^k = mean(x^k) = e^{k mean_log} mean(e^{ky}); computed with the largest term factored out.
  double top = -INFINITY;
  for (const double v : y) top = std::max(top, k * v);
  double sum = 0;
  for (const double v : y) sum += std::exp(k * v - top);
  const double scale =
      std::exp(mean_log + (top + std::log(sum / static_cast<double>(y.size()))) / k);
  return WeibullFit{k, scale};
}

std::optional<LognormalFit> fit_lognormal(std::span<const double> samples) {
  if (samples.empty()) return std::nullopt;
  double mu = 0;
  for (const double x : samples) {
    RECYCLE_ASSERT(x > 0, "lognormal samples must be positive");
    mu += std::log(x);
  }
  mu /= static_cast<double>(samples.size());
  double var = 0;
  for (const double x : samples) var += (std::log(x) - mu) * (std::log(x) - mu);
  return LognormalFit{mu, std::sqrt(var / static_cast<double>(samples.size()))};
}

}  // namespace recycle::traces
