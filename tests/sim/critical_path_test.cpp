// The critical path's promise (docs/metrics.md): each step starts exactly when its cause, the
// step before it, ended, so the steps tile the path from its first start to its last end. Checked
// on every schedule of the corpus (tests/sim/corpus.hpp) on a real network, where SENDs and RECVs
// last until their transfers end but the transfers start when they are posted. On `direct` the
// data's flight is no step of its own: a step that reads data from another worker starts that
// flight after its cause ended, so a gap may open only where the path changes worker.
#include <doctest/doctest.h>

#include <cstddef>
#include <utility>

#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "tests/sim/corpus.hpp"

using namespace recycle;

TEST_CASE("each step of the critical path starts when the step before it ended") {
  const planner::Layout layout{3, 4, 8, 1};
  const auto plans = sim_test::corpus(sim_test::four_stages(layout), layout);
  for (const auto& [network, eager] :
       {std::pair{planner::Network::kRuntime, false}, std::pair{planner::Network::kRuntime, true},
        std::pair{planner::Network::kDirect, false}}) {
    for (const sim_test::Named& plan : plans) {
      CAPTURE(plan.name);
      CAPTURE(static_cast<int>(network));
      CAPTURE(eager);
      sim::SimOptions options;
      options.staggered_optimizer = plan.schedule.staggered_optimizer;
      options.network = network;
      options.eager_sends = eager;
      const sim::Metrics m = sim::compute_metrics(
          sim::simulate(plan.schedule, sim_test::four_stages(plan.schedule.layout), options));
      const auto& path = m.critical_path;
      REQUIRE(path.size() >= 2);
      CHECK(m.critical_path_length == path.back().end - path.front().start);
      for (std::size_t k = 1; k < path.size(); ++k) {
        CAPTURE(k);
        CAPTURE(path[k - 1].token);
        CAPTURE(path[k].token);
        CHECK(path[k - 1].start <= path[k - 1].end);
        if (network == planner::Network::kDirect && path[k].worker != path[k - 1].peer) {
          CHECK(path[k].start >= path[k - 1].end);  // the data's flight, if data came
        } else {
          CHECK(path[k].start == path[k - 1].end);
        }
      }
    }
  }
}
