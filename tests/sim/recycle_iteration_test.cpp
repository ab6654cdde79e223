// ReCycle's throughput claims on the simulator, with uniform costs F = I = W = 1 s and free
// communication (--costs), against fault-free 1F1B: (m + p - 1)(F + I + W) per iteration.
#include <doctest/doctest.h>

#include "planner/generators.hpp"
#include "planner/recycle_planner.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"

using namespace recycle;

namespace {

Nanos iteration(planner::Schedule schedule) {
  const planner::Costs costs = planner::Costs::uniform(schedule.layout.virtual_stages(), {1, 1, 1});
  sim::SimOptions options;
  options.staggered_optimizer = schedule.staggered_optimizer;
  return sim::compute_metrics(
             sim::simulate(std::move(schedule), planner::CostModel::compute_only(costs), options))
      .iteration_time;
}

planner::Schedule recycle_plan(const planner::Layout& layout,
                               std::vector<planner::WorkerId> failed) {
  planner::RecycleOptions options;
  options.layout = layout;
  options.failed = std::move(failed);
  planner::RecyclePlan plan = planner::plan_recycle(options);
  REQUIRE(plan.feasible);
  plan.schedule.staggered_optimizer = true;
  return plan.schedule;
}

}  // namespace

TEST_CASE(
    "one failure at PP 8, DP 8, 8 micro-batches: within 5% of fault-free 1F1B, at any stage") {
  const planner::Layout layout{8, 8, 8, 1};
  const Nanos one_f_one_b = (8 + 8 - 1) * 3;  // 45
  planner::GeneratorOptions gen;
  gen.layout = layout;
  REQUIRE(iteration(planner::generate_fault_free("1f1b", gen)) == one_f_one_b);
  for (std::int32_t s = 0; s < 8; ++s) {
    CAPTURE(s);
    CHECK(iteration(recycle_plan(layout, {{3, s}})) * 100 <= one_f_one_b * 105);
  }
}

TEST_CASE("the staggered optimizer removes ReCycle's bubble: the simulator agrees, m(F+I+W)") {
  // With 2pp micro-batches of memory and m >= 2pp the lower bound of a staggered period is the
  // work, 3m (tests/planner/recycle_planner_test.cpp says why); the simulator times the plan there.
  for (std::int32_t pp : {2, 4, 8}) {
    const std::int32_t m = 2 * pp;
    CAPTURE(pp);
    planner::RecycleOptions options;
    options.layout = {2, pp, m, 1};
    options.memory_limit = 2 * pp;
    planner::RecyclePlan plan = planner::plan_recycle(options);
    REQUIRE(plan.feasible);
    CHECK(iteration(plan.schedule) == 3 * m);
  }
}

TEST_CASE("ReCycle is never slower than the naive re-route as failures grow in one stage") {
  const planner::Layout layout{4, 4, 8, 1};
  for (std::int32_t k = 1; k < 4; ++k) {
    std::vector<planner::WorkerId> failed;
    for (std::int32_t d = 0; d < k; ++d) failed.push_back({d, 2});
    CAPTURE(k);
    const planner::RecyclePlan naive = planner::plan_naive_reroute(layout, failed);
    CHECK(iteration(recycle_plan(layout, failed)) <= iteration(naive.schedule));
  }
}
