// The order search: its lower bounds worked out by hand, and what every search result must be: a
// valid schedule within the memory limit, whose steady state is the one it reports, never worse
// than its first start, the same on every run.
#include "planner/order_search.hpp"

#include <doctest/doctest.h>

#include <tuple>

#include "planner/language/failures.hpp"
#include "planner/language/timing.hpp"
#include "planner/language/validator.hpp"
#include "planner/list_scheduler.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/period.hpp"
#include "tests/planner/test_helpers.hpp"

using namespace recycle::planner;
using namespace recycle::planner::testing;
using recycle::Nanos;

TEST_CASE("order search lower bound: one pipeline of two stages, two micro-batches") {
  // F = I = W = 1. Stage 1 gets its first input at 1 and has 2 x 3 = 6 units: at least 7.
  // Stage 0's first gradient arrives at F0 + F1 + I1 = 3 and it has 2 x (I + W) = 4 units of
  // I and W left: at least 7 too. The chain of one micro-batch is F F I I W = 5.
  const Schedule s = skeleton({1, 2, 2, 1}, "");
  CHECK(makespan_lower_bound(s, Costs::uniform(2, {1, 1, 1})) == 7);
}

TEST_CASE("order search lower bound: a re-routed stage, and the plan that meets it") {
  // DP 2, PP 2, m 2, (0,1) failed: worker (1,1) runs all 4 micro-batches of stage 1, 12 units
  // from its first input at 1 on: at least 13. It can run without a gap (two inputs wait at 1,
  // two more at 2, and each I follows its F), ending with a W after its last I at 10-11, whose
  // gradient reaches stage 0 for I 11-12 and W 12-13: 13 is reached. Under the optimizer barrier
  // every iteration repeats the first: the period is 13 too.
  const Layout layout{2, 2, 2, 1};
  const Costs costs = Costs::uniform(2, {1, 1, 1});
  Schedule skel = skeleton(layout, "0:1");
  CHECK(makespan_lower_bound(skel, costs) == 13);
  CHECK(period_lower_bound(skel, costs) == 13);
  RecycleOptions options;
  options.layout = layout;
  options.failed = parse_failures("0:1", layout);
  options.model = CostModel::compute_only(costs);
  options.staggered_optimizer = false;
  const RecyclePlan plan = plan_recycle(options);
  REQUIRE(plan.feasible);
  CHECK(compute_timeline(plan.schedule, costs)->makespan == 13);
  CHECK(plan.estimate.period == 13);
  // Staggered, a worker's period is at least its own work: (1,1) has 4 x 3 = 12, the most.
  skel.staggered_optimizer = true;
  CHECK(period_lower_bound(skel, costs) == 12);
}

TEST_CASE("order search: valid, within the memory limit, never longer than its start") {
  struct Case {
    Layout layout;
    const char* failed;
    std::int32_t limit;
    StageCost cost;
  };
  for (const Case& c :
       {Case{{2, 3, 4, 1}, "0:1", 3, {1, 2, 1}}, Case{{3, 3, 4, 1}, "0:0,1:1", 2, {1, 1, 1}},
        Case{{4, 4, 4, 1}, "0:1,1:2,2:3", 1, {2, 3, 1}},
        Case{{3, 4, 6, 1}, "0:1,0:2", 4, {1, 2, 1}}, Case{{2, 2, 3, 1}, "", 2, {1, 1, 0}}}) {
    CAPTURE(c.failed);
    CAPTURE(c.limit);
    const Schedule skel = skeleton(c.layout, c.failed);
    const Costs costs = Costs::uniform(c.layout.pp, c.cost);
    const std::vector<std::int32_t> limits = uniform_limit(c.layout, c.limit);
    const ListScheduleResult start = list_schedule({&skel, &costs, limits, true, false, false, {}});
    for (const bool staggered : {false, true}) {
      CAPTURE(staggered);
      Schedule mode = skel;
      mode.staggered_optimizer = staggered;
      const CostModel model = CostModel::compute_only(costs);
      Schedule first = mode;
      first.workers = start.workers;
      const auto before = direct_steady_state(first, model);
      REQUIRE(before.has_value());
      const OrderSearchResult r =
          search_orders({&mode, &model, limits, 2'000'000}, {start.workers});
      CHECK(std::tie(r.score.period, r.score.makespan) <=
            std::tie(before->period, before->makespan));
      CHECK(r.lower_bound <= r.score.period);
      Schedule out = mode;
      out.workers = r.workers;
      ValidationOptions validation;
      validation.memory_limit = c.limit;
      for (const Violation& v : validate(out, validation)) FAIL_CHECK(v.message);
      const auto after = direct_steady_state(out, model);
      REQUIRE(after.has_value());
      CHECK(after->period == r.score.period);
      CHECK(after->makespan == r.score.makespan);

      // No budget: the first start as it came.
      const OrderSearchResult none = search_orders({&mode, &model, limits, 0}, {start.workers});
      CHECK(none.score.period == before->period);
      CHECK(none.workers == start.workers);
    }
  }
}

TEST_CASE("ReCycle plans with the order search are the same on every run") {
  RecycleOptions options;
  options.layout = {4, 4, 4, 1};
  options.failed = parse_failures("0:0,1:1,2:2", options.layout);
  options.model = CostModel::compute_only(Costs::uniform(4, {1, 2, 1}));
  const RecyclePlan a = plan_recycle(options);
  const RecyclePlan b = plan_recycle(options);
  CHECK(a.schedule == b.schedule);
}
