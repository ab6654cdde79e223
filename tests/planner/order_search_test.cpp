// The order search: its lower bounds worked out by hand, and what every search result must be: a
// valid schedule within the memory limit, whose steady state is the one it reports, never worse
// than its first start, the same on every run.
#include "planner/order_search.hpp"

#include <doctest/doctest.h>

#include <string>
#include <tuple>
#include <utility>

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

TEST_CASE("order search lower bound: a worker holding few activations waits for its first I") {
  // DP 4, PP 4, m 6, F = 1, I = 2, W = 1, workers 0:0, 1:2 and 2:3 failed. Each stage-0 survivor
  // runs 8 micro-batches, 32 s of work, and its first I waits for F on the four stages and I on
  // stages 3 to 1: 4 + 6 = 10 s. Before it, only Fs: all 8 (8 s) without a memory limit, 4 with
  // a limit of 4 micro-batches, so at least 10 + 32 - 8 = 34 s, or 10 + 32 - 4 = 38 s. A stage-3
  // survivor (8 micro-batches) gets its first input at 3 s and its first I can start at 4 s, 1 s
  // of F before it: 4 + 32 - 1 = 35 s, the bound without a limit. The exact planner proves 38 s
  // optimal on these routes (docs/recycle.md).
  const Layout layout{4, 4, 6, 1};
  const Schedule skel = skeleton(layout, "0:0,1:2,2:3");
  const Costs costs = Costs::uniform(4, {1, 2, 1});
  CHECK(makespan_lower_bound(skel, costs) == 35);
  CHECK(makespan_lower_bound(skel, costs, uniform_limit(layout, 4)) == 38);
  CHECK(period_lower_bound(skel, costs, uniform_limit(layout, 4)) == 38);
  // A limit far above what a worker runs changes nothing, even where the limit times an F (65,536
  // x 1e15 ns) is past what 64 bits hold.
  const Costs slow = Costs::uniform(4, {1'000'000'000'000'000, 1'000'000'000'000'000, 1});
  const std::vector<std::int32_t> most = uniform_limit(layout, 65'536);
  CHECK(makespan_lower_bound(skel, slow, most) == makespan_lower_bound(skel, slow));
  Schedule staggered = skel;
  staggered.staggered_optimizer = true;
  CHECK(period_lower_bound(staggered, slow, most) == period_lower_bound(staggered, slow));
}

namespace {

/// F = I = W = `compute` ns; every stage sends 1000 bytes, which takes 100 ns + 1000 ns between
/// nodes (one GPU a node, so every hop crosses nodes); each stage all-reduces 2000 bytes and steps
/// in 500 ns.
CostModel networked(const Layout& layout, Nanos compute = 1000) {
  const std::int32_t pp = layout.pp;
  const std::int32_t chunks = layout.virtual_stages();
  CostModel model = CostModel::compute_only(Costs::uniform(chunks, {compute, compute, compute}));
  model.compute.optimizer.assign(static_cast<std::size_t>(pp), 500);
  model.output_bytes.assign(static_cast<std::size_t>(chunks), 1000);
  model.param_bytes.assign(static_cast<std::size_t>(pp), 2000);
  recycle::profiles::HardwareSpec hw;
  hw.gpus_per_node = 1;
  hw.intra_node_bandwidth = 1e10;
  hw.inter_node_bandwidth = 1e9;  // 1 byte per ns
  hw.intra_node_latency = 10;
  hw.inter_node_latency = 100;
  model.cluster = Cluster(hw, 1, pp);
  return model;
}

}  // namespace

TEST_CASE("order search lower bound: transfers, the all-reduce and the step on a network") {
  // DP 2, PP 2, m 2, memory 2, the model above: a hop takes h = 1100 ns and the all-reduce of
  // two peers 2 x 1/2 x 2000 + 2 x 100 = 2200 ns.
  const Layout layout{2, 2, 2, 1};
  const CostModel model = networked(layout);
  Schedule skel = skeleton(layout);
  const std::vector<std::int32_t> limits = uniform_limit(layout, 2);
  // Staggered: a stage-0 worker runs 2 x 3000 ns of work; its first I waits for F0, the hop, F1,
  // I1 and the hop back, 1000 + 1100 + 1000 + 1000 + 1100 = 5200 ns after its first F, and it
  // can run only its two Fs (2000 ns) before: 3200 ns idle; then the all-reduce and the step:
  // 6000 + 3200 + 2200 + 500 = 11900 ns. Stage 1 never waits: 6000 + 2200 + 500 = 8700 ns.
  skel.staggered_optimizer = true;
  CHECK(period_lower_bound(skel, model, limits) == 11'900);
  // Barrier: the makespan's bound is stage 0's first I at 5200 ns plus its work but the two Fs
  // before it, 5200 + 6000 - 2000 = 9200 ns; then the least all-reduce and the least step.
  skel.staggered_optimizer = false;
  CHECK(makespan_lower_bound(skel, model, limits) == 9'200);
  CHECK(period_lower_bound(skel, model, limits) == 9'200 + 2'200 + 500);
  // With the compute costs alone (a free network, the steps kept) the hops and the all-reduce go:
  // stage 0's first I at 1000 + 1000 + 1000 = 3000 ns, 3000 + 6000 - 2000 = 7000 ns, then a step.
  CHECK(period_lower_bound(skel, model.compute, limits) == 7'000 + 500);
}

TEST_CASE("order search lower bound: never above the period of a plan, on a network") {
  // Every ReCycle plan (both optimizer modes, loop, interleaved, V and 2bw bases, failures or
  // none) has a steady state no shorter than the bound for its routes, costs and limits.
  struct Case {
    const char* base;
    Layout layout;
    const char* failed;
  };
  for (const Case& c :
       {Case{"1f1b", {2, 2, 4, 1}, ""}, Case{"1f1b", {3, 3, 4, 1}, "0:1"},
        Case{"1f1b", {4, 4, 6, 1}, "0:0,1:2,2:3"}, Case{"1f1b", {3, 4, 8, 1}, "0:1,0:2"},
        Case{"interleaved", {2, 2, 4, 2}, "1:1"}, Case{"zb-v", {3, 2, 4, 2, Placement::kV}, "0:0"},
        Case{"dualpipe-v", {2, 2, 4, 2, Placement::kV}, "1:0"}, Case{"2bw", {3, 3, 6, 1}, "1:1"},
        Case{"2bw", {2, 4, 8, 1}, ""}}) {
    for (const auto& [compute, staggered] :
         {std::pair<Nanos, bool>{1000, false}, {1000, true}, {10'000, false}, {10'000, true}}) {
      CAPTURE(compute);
      const std::string what = std::string(c.base) + " fail " + c.failed;
      CAPTURE(what);
      CAPTURE(staggered);
      RecycleOptions options;
      options.layout = c.layout;
      options.base = c.base;
      options.failed = parse_failures(c.failed, c.layout);
      options.model = networked(c.layout, compute);
      options.staggered_optimizer = staggered;
      const RecyclePlan plan = plan_recycle(options);
      REQUIRE(plan.feasible);
      const auto steady = direct_steady_state(plan.schedule, options.model);
      REQUIRE(steady.has_value());
      const Nanos bound = recycle_period_bound(options);
      CHECK(bound <= steady->period);
      // As `recycle simulate` runs it (torch's runtime network): no shorter.
      const auto run = steady_state(plan.schedule, options.model);
      REQUIRE(run.has_value());
      CHECK(bound <= run->period);
    }
  }
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
