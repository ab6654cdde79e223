// The random laws of the trace generator, each written on the command line as a short spec:
//  - time between failure instants in the cluster: `exp` or `weibull:K` (shape K; real traces have
//    K = 0.5-0.8: failures cluster in time);
//  - repair time of a node: `fixed:H`, `exp:H` (mean H hours) or `lognormal:MU,SIGMA` (of ln
//  hours);
//  - correlated bursts: `P:K`, with probability P a failure takes K other nodes down at the same
//    instant (`none`: never).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/rng.hpp"

namespace recycle::traces {

struct TbfModel {
  enum class Kind { kExponential, kWeibull };
  Kind kind = Kind::kExponential;
  double shape = 1.0;  ///< Weibull shape (1 for exponential)

  /// `exp` or `weibull:K`, K in [0.1, 10]; `where` names the flag in errors.
  [[nodiscard]] static TbfModel parse(std::string_view spec, const std::string& where);
  [[nodiscard]] std::string spec() const;
  /// A time between failure instants, in seconds, with the given mean.
  [[nodiscard]] double draw_seconds(Rng& rng, double mean_seconds) const;
};

struct RepairModel {
  enum class Kind { kFixed, kExponential, kLognormal };
  Kind kind = Kind::kFixed;
  double hours = 24.0;  ///< fixed: the repair time; exponential: its mean
  double mu = 0.0;      ///< lognormal: mean of ln(hours)
  double sigma = 0.0;   ///< lognormal: standard deviation of ln(hours)

  /// `fixed:H`, `exp:H` or `lognormal:MU,SIGMA`.
  [[nodiscard]] static RepairModel parse(std::string_view spec, const std::string& where);
  [[nodiscard]] std::string spec() const;
  [[nodiscard]] double draw_hours(Rng& rng) const;
  [[nodiscard]] double mean_hours() const;
};

struct BurstModel {
  double probability = 0.0;  ///< that a failure takes `extra` other nodes down with it
  std::int64_t extra = 0;

  /// `P:K` (P in [0, 1], K >= 1) or `none`.
  [[nodiscard]] static BurstModel parse(std::string_view spec, const std::string& where);
  [[nodiscard]] std::string spec() const;
  /// Nodes that fail at one failure instant, on average.
  [[nodiscard]] double mean_size() const noexcept {
    return 1.0 + probability * static_cast<double>(extra);
  }
};

}  // namespace recycle::traces
