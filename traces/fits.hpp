// Maximum-likelihood fits of the two laws that describe failure traces best: Weibull for times
// between failures, lognormal for repair times.
#pragma once

#include <optional>
#include <span>

namespace recycle::traces {

struct WeibullFit {
  double shape = 0;  ///< k: below 1, failures cluster in time; 1, exponential
  double scale = 0;  ///< lambda, in the unit of the samples
};

/// The maximum-likelihood Weibull of positive samples; nullopt for fewer than 2 samples or when all
/// are equal (the shape has no finite estimate).
[[nodiscard]] std::optional<WeibullFit> fit_weibull(std::span<const double> samples);

struct LognormalFit {
  double mu = 0;     ///< mean of ln(x)
  double sigma = 0;  ///< standard deviation of ln(x) (maximum likelihood: divided by n)
};

/// The maximum-likelihood lognormal of positive samples; nullopt when there are none.
[[nodiscard]] std::optional<LognormalFit> fit_lognormal(std::span<const double> samples);

}  // namespace recycle::traces
