// A plan's predicted period (planner/timing/period.hpp, what `recycle plan` writes as period_s)
// against what the simulator reports for the same schedule (the last of four iterations), for every
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

#include "planner/timing/period.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "tests/sim/corpus.hpp"

namespace {

using namespace recycle;
using sim_test::corpus;
using sim_test::four_stages;
using sim_test::Named;

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
