// A plan's predicted period (planner/period.hpp, what `recycle plan` writes as period_s) against
// what the simulator reports for the same schedule (the last of four iterations), for every
// generator and for plans around failed workers, on a profile with a real network (four uneven
// stages, two workers per node) under each network model. The two are computed differently (a
// walk until the iterations repeat, and recorded iterations), so agreement is not given. A
// schedule whose iterations repeat every c > 1 iterations has the mean of c as its period; the
// simulator's iteration time is its last one.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "planner/generators.hpp"
#include "planner/period.hpp"
#include "planner/recycle_planner.hpp"
#include "profiles/profile.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"

namespace {

using namespace recycle;

planner::CostModel four_stages(const planner::Layout& layout) {
  const auto profile =
      profiles::load_profile(std::string(RECYCLE_SOURCE_DIR) + "/tests/sim/data/four_stages.json");
  return planner::CostModel::from_profile(profile, layout, "four_stages.json");
}

struct Named {
  std::string name;
  planner::Schedule schedule;
};

std::vector<Named> corpus(const planner::CostModel& model, const planner::Layout& layout) {
  std::vector<Named> out;
  for (const std::string name : {"gpipe", "1f1b", "zb-h1", "zb-h2"}) {
    for (const bool staggered : {false, true}) {
      planner::GeneratorOptions gen;
      gen.layout = layout;
      gen.model = model;
      gen.staggered_optimizer = staggered;
      out.push_back(
          {name + (staggered ? " staggered" : ""), planner::generate_fault_free(name, gen)});
    }
  }
  planner::GeneratorOptions interleaved;
  interleaved.layout = {layout.dp, layout.pp, layout.microbatches, 2};
  out.push_back({"interleaved", planner::generate_fault_free("interleaved", interleaved)});
  for (const std::vector<planner::WorkerId>& failed :
       std::vector<std::vector<planner::WorkerId>>{{}, {{1, 2}}, {{0, 1}, {2, 3}}}) {
    for (const bool staggered : {false, true}) {
      planner::RecycleOptions options;
      options.layout = layout;
      options.failed = failed;
      options.model = model;
      options.staggered_optimizer = staggered;
      out.push_back({"recycle, " + std::to_string(failed.size()) + " failed" +
                         (staggered ? " staggered" : ""),
                     planner::plan_recycle(options).schedule});
    }
    if (!failed.empty())
      out.push_back({"naive re-route", planner::plan_naive_reroute(layout, failed).schedule});
  }
  return out;
}

}  // namespace

TEST_CASE("a plan's predicted period is the period the simulator reports, on a real network") {
  const planner::Layout layout{3, 4, 8, 1};
  const std::vector<Named> plans = corpus(four_stages(layout), layout);
  for (const auto& [network, eager] :
       {std::pair{planner::Network::kRuntime, false}, std::pair{planner::Network::kRuntime, true},
        std::pair{planner::Network::kDirect, false}}) {
    for (const Named& plan : plans) {
      CAPTURE(plan.name);
      CAPTURE(static_cast<int>(network));
      CAPTURE(eager);
      const planner::CostModel model = four_stages(plan.schedule.layout);
      planner::RunOptions run;
      run.network = network;
      run.eager_sends = eager;
      const auto predicted = planner::steady_state(plan.schedule, model, run);
      REQUIRE(predicted.has_value());
      CHECK(predicted->settled);
      sim::SimOptions options;
      options.staggered_optimizer = plan.schedule.staggered_optimizer;
      options.network = network;
      options.eager_sends = eager;
      const sim::Metrics simulated =
          sim::compute_metrics(sim::simulate(plan.schedule, model, options));
      CHECK(predicted->makespan == simulated.iteration_ends.front());
      // The target: within 1 % of the simulator's iteration time (its last iteration).
      CHECK(std::abs(static_cast<double>(predicted->period - simulated.iteration_time)) <=
            0.01 * static_cast<double>(simulated.iteration_time));
      // Exactly: once the walk has settled, every `cycle` iterations take `cycle` periods (the
      // period is their time divided by the cycle, in whole nanoseconds).
      options.iterations = std::max(4, predicted->iterations + predicted->cycle);
      const sim::Metrics longer =
          sim::compute_metrics(sim::simulate(plan.schedule, model, options));
      const auto& ends = longer.iteration_ends;
      const auto n = ends.size();
      const auto c = static_cast<std::size_t>(predicted->cycle);
      CHECK(predicted->period == (ends[n - 1] - ends[n - 1 - c]) / predicted->cycle);
    }
  }
}
