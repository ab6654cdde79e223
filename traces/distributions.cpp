#include "traces/distributions.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/parse.hpp"

namespace recycle::traces {

namespace {

/// "name:args" -> {"name", "args"}; no colon -> {"name", ""}.
std::pair<std::string_view, std::string_view> split_spec(std::string_view spec) {
  const std::string_view t = trim(spec);
  const auto colon = t.find(':');
  if (colon == std::string_view::npos) return {t, {}};
  return {t.substr(0, colon), t.substr(colon + 1)};
}

double positive(std::string_view text, const std::string& where, std::string_view what) {
  const double value = parse_double(text, where);
  if (value <= 0)
    throw InputError(where, std::string(what) + " must be > 0, got " + std::string(trim(text)));
  return value;
}

}  // namespace

TbfModel TbfModel::parse(std::string_view spec, const std::string& where) {
  const auto [name, args] = split_spec(spec);
  if (name == "exp" && args.empty()) return {};
  if (name == "weibull" && !args.empty()) {
    const double shape = parse_double(args, where);
    if (shape < 0.1 || shape > 10) {
      throw InputError(where, "Weibull shape must be in [0.1, 10], got " + std::string(args));
    }
    return {Kind::kWeibull, shape};
  }
  throw InputError(where, "expected exp or weibull:SHAPE, got '" + std::string(trim(spec)) + "'");
}

std::string TbfModel::spec() const {
  return kind == Kind::kExponential ? std::string("exp") : fmt::format("weibull:{}", shape);
}

double TbfModel::draw_seconds(Rng& rng, double mean_seconds) const {
  if (kind == Kind::kExponential) return rng.exponential(mean_seconds);
  return rng.weibull(shape, mean_seconds / std::tgamma(1.0 + 1.0 / shape));
}

RepairModel RepairModel::parse(std::string_view spec, const std::string& where) {
  const auto [name, args] = split_spec(spec);
  RepairModel model;
  if ((name == "fixed" || name == "exp") && !args.empty()) {
    model.kind = name == "fixed" ? Kind::kFixed : Kind::kExponential;
    model.hours = positive(args, where, "repair time");
    return model;
  }
  if (name == "lognormal") {
    const std::vector<std::string_view> parts = split(args, ',');
    if (parts.size() == 2) {
      model.kind = Kind::kLognormal;
      model.mu = parse_double(parts[0], where);
      model.sigma = parse_double(parts[1], where);
      if (model.sigma < 0 || model.sigma > 5 || std::fabs(model.mu) > 20) {
        throw InputError(where, "lognormal needs |MU| <= 20 and SIGMA in [0, 5] (of ln hours)");
      }
      return model;
    }
  }
  throw InputError(where, "expected fixed:HOURS, exp:HOURS or lognormal:MU,SIGMA, got '" +
                              std::string(trim(spec)) + "'");
}

std::string RepairModel::spec() const {
  switch (kind) {
    case Kind::kFixed:
      return fmt::format("fixed:{}", hours);
    case Kind::kExponential:
      return fmt::format("exp:{}", hours);
    case Kind::kLognormal:
      return fmt::format("lognormal:{},{}", mu, sigma);
  }
  RECYCLE_ASSERT(false, "unhandled repair model");
}

double RepairModel::draw_hours(Rng& rng) const {
  switch (kind) {
    case Kind::kFixed:
      return hours;
    case Kind::kExponential:
      return rng.exponential(hours);
    case Kind::kLognormal:
      return std::exp(rng.normal(mu, sigma));
  }
  RECYCLE_ASSERT(false, "unhandled repair model");
}

double RepairModel::mean_hours() const {
  if (kind == Kind::kLognormal) return std::exp(mu + sigma * sigma / 2);
  return hours;
}

BurstModel BurstModel::parse(std::string_view spec, const std::string& where) {
  const auto [p, k] = split_spec(spec);
  if (p == "none" && k.empty()) return {};
  if (k.empty())
    throw InputError(where, "expected P:K or none, got '" + std::string(trim(spec)) + "'");
  BurstModel model{parse_double(p, where), parse_int(k, where)};
  if (model.probability < 0 || model.probability > 1) {
    throw InputError(where, "burst probability must be in [0, 1], got " + std::string(p));
  }
  if (model.extra < 1) throw InputError(where, "burst size K must be >= 1, got " + std::string(k));
  return model;
}

std::string BurstModel::spec() const {
  if (probability == 0) return "none";
  return fmt::format("{}:{}", probability, extra);
}

}  // namespace recycle::traces
