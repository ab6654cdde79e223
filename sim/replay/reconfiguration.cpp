#include "sim/replay/reconfiguration.hpp"

#include <array>
#include <cmath>
#include <optional>

namespace recycle::sim {

namespace {

struct Published {
  const char* model;
  double parameters;
  Seconds oobleck;
  Seconds bamboo;
};

// Oobleck's artifact simulator, tools/simulator: oobleck_simulator.py and bamboo_simulator.py.
constexpr std::array<Published, 3> kPublished{{
    {"GPT-3 Medium", 350e6, 3, 100},
    {"GPT-3 2.7B", 2.7e9, 6, 230},
    {"GPT-3 6.7B", 6.7e9, 10, 450},
}};

/// The published row nearest the job's model in log(parameters).
const Published& nearest(const profiles::Job& job) {
  const double p = static_cast<double>(job.model.parameters());
  const Published* best = &kPublished.front();
  for (const Published& row : kPublished) {
    if (std::abs(std::log(row.parameters / p)) < std::abs(std::log(best->parameters / p)))
      best = &row;
  }
  return *best;
}

ReconfigurationCost resolve(const profiles::Job& job, const std::optional<Seconds>& own,
                            Seconds Published::*field) {
  const profiles::RestartBlock& r = job.resilience.restart;
  if (own) return {*own, "the job file"};
  if (r.reconfigure_s) return {*r.reconfigure_s, "the job file's reconfigure_s"};
  const Published& row = nearest(job);
  return {row.*field, std::string("Oobleck's artifact simulator for ") + row.model +
                          ", the nearest size it reports"};
}

}  // namespace

ReconfigurationCost oobleck_reconfiguration(const profiles::Job& job) {
  return resolve(job, job.resilience.restart.oobleck_reconfigure_s, &Published::oobleck);
}

ReconfigurationCost bamboo_reconfiguration(const profiles::Job& job) {
  return resolve(job, job.resilience.restart.bamboo_reconfigure_s, &Published::bamboo);
}

}  // namespace recycle::sim
