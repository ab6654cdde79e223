// The ReCycle planner: every plan is a valid schedule, re-routing is balanced, normalization and
// the plan table give the same plans as direct planning, and the throughput claims hold for
// uniform costs. Expected values come from the formulas written next to each check.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "planner/candidates.hpp"
#include "planner/generators.hpp"
#include "planner/language/failures.hpp"
#include "planner/language/lower.hpp"
#include "planner/language/timing.hpp"
#include "planner/language/validator.hpp"
#include "planner/list_scheduler.hpp"
#include "planner/plan_table.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/period.hpp"

using namespace recycle::planner;
using recycle::Nanos;

namespace {

std::string describe(const std::vector<Violation>& violations) {
  std::string out;
  for (const auto& v : violations) out += v.message + "\n";
  return out;
}

RecyclePlan plan(const Layout& layout, std::vector<WorkerId> failed,
                 std::optional<std::int32_t> limit = {}, StageCost cost = {1, 1, 1}) {
  std::sort(failed.begin(), failed.end());
  RecycleOptions options;
  options.layout = layout;
  options.failed = failed;
  options.memory_limit = limit;
  options.model = CostModel::compute_only(Costs::uniform(layout.virtual_stages(), cost));
  return plan_recycle(options);
}

Nanos makespan(const Schedule& schedule, StageCost cost = {1, 1, 1}) {
  const auto timeline =
      compute_timeline(schedule, Costs::uniform(schedule.layout.virtual_stages(), cost));
  REQUIRE(timeline.has_value());
  return timeline->makespan;
}

/// Failure sets that leave every stage a live worker: one stage, several stages, one pipeline,
/// random.
std::vector<std::vector<WorkerId>> failure_sets(const Layout& layout, std::uint64_t seed) {
  std::vector<std::vector<WorkerId>> sets = {{}};
  for (std::int32_t s = 0; s < layout.pp; ++s) sets.push_back({{0, s}});
  if (layout.dp >= 3) sets.push_back({{0, 1 % layout.pp}, {2, 1 % layout.pp}});
  if (layout.pp >= 3) sets.push_back({{0, 0}, {0, 1}, {0, 2}});  // one pipeline
  if (layout.pp >= 2 && layout.dp >= 2) sets.push_back({{0, 0}, {1, layout.pp - 1}});  // two stages
  recycle::Rng rng(seed);
  for (int k = 0; k < 4; ++k) {
    std::vector<WorkerId> set;
    const auto n = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(layout.dp)));
    for (std::int32_t i = 0; i < n; ++i) {
      set.push_back({static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(layout.dp))),
                     static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(layout.pp)))});
    }
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
    if (dead_stage(set, layout) < 0) sets.push_back(set);
  }
  return sets;
}

}  // namespace

TEST_CASE(
    "every ReCycle plan is a valid schedule within the memory limit, before and after lowering") {
  for (const Layout layout : {Layout{2, 2, 2, 1}, Layout{3, 4, 4, 1}, Layout{4, 3, 8, 1},
                              Layout{8, 8, 8, 1}, Layout{4, 4, 1, 1}, Layout{3, 2, 5, 1}}) {
    for (const auto& failed : failure_sets(layout, static_cast<std::uint64_t>(layout.workers()))) {
      CAPTURE(layout.dp);
      CAPTURE(layout.pp);
      CAPTURE(layout.microbatches);
      CAPTURE(failed.size());
      const RecyclePlan p = plan(layout, failed);
      REQUIRE(p.feasible);
      ValidationOptions options;
      options.memory_limit = layout.pp;  // the default limit: 1F1B's peak
      const auto violations = validate(p.schedule, options);
      CHECK_MESSAGE(violations.empty(), describe(violations));
      const auto lowered = validate(lower(p.schedule), options);
      CHECK_MESSAGE(lowered.empty(), describe(lowered));
      // Live workers only, and one route per micro-batch of every failed worker.
      CHECK(p.schedule.workers.size() ==
            static_cast<std::size_t>(layout.workers()) - failed.size());
      CHECK(p.schedule.routes.size() ==
            failed.size() * static_cast<std::size_t>(layout.microbatches));
    }
  }
}

TEST_CASE("a tighter memory limit is respected") {
  const Layout layout{4, 4, 8, 1};
  for (const std::int32_t limit : {1, 2, 3}) {
    const RecyclePlan p = plan(layout, {{1, 2}}, limit);
    ValidationOptions options;
    options.memory_limit = limit;
    CHECK(validate(p.schedule, options).empty());
  }
}

TEST_CASE("balanced re-routing: one failure spreads m micro-batches over the DP - 1 live peers") {
  // m = 8 over 3 peers: each takes floor(8/3) = 2 or ceil(8/3) = 3.
  const Layout layout{4, 4, 8, 1};
  const auto routes = balanced_routes(layout, {{1, 2}});
  REQUIRE(routes.size() == 8);
  std::vector<int> per_peer(4, 0);
  for (const Route& r : routes) {
    CHECK(r.owner == 1);
    CHECK(r.stage == 2);
    CHECK(r.dp != 1);
    ++per_peer[static_cast<std::size_t>(r.dp)];
  }
  CHECK(per_peer[1] == 0);
  for (int d : {0, 2, 3})
    CHECK(
        (per_peer[static_cast<std::size_t>(d)] == 2 || per_peer[static_cast<std::size_t>(d)] == 3));
}

TEST_CASE("re-routing avoids peers whose neighbouring stage already carries re-routed work") {
  // Failures (0,1) and (1,2), DP 4, m 2: (0,1)'s two micro-batches go to the least-loaded peers
  // 1 and 2 (ties by index). For (1,2), peer 0 carries nothing at stages 1 and 3, peer 2 carries
  // one at stage 1, peer 3 nothing: so the two go to 0 and 3.
  const Layout layout{4, 4, 2, 1};
  const auto routes = balanced_routes(layout, {{0, 1}, {1, 2}});
  std::vector<Route> expected = {{0, 1, 0, 1}, {0, 1, 1, 2}, {1, 2, 0, 0}, {1, 2, 1, 3}};
  CHECK(routes == expected);
}

namespace {

/// pp 2, TP 2 on 8-GPU nodes: pipelines 2k and 2k + 1 share node k. 1,000 bytes between stages;
/// inside a node 10 ns + 1 ns per byte, between nodes 100 ns + 10 ns per byte.
CostModel two_pipelines_per_node() {
  CostModel model = CostModel::compute_only(Costs::uniform(2, {1, 1, 1}));
  recycle::profiles::HardwareSpec hw;
  hw.gpus_per_node = 8;
  hw.intra_node_bandwidth = 1e9;
  hw.inter_node_bandwidth = 1e8;
  hw.intra_node_latency = 10;
  hw.inter_node_latency = 100;
  model.cluster = Cluster(hw, 2, 2);
  model.output_bytes = {1000, 1000};
  return model;
}

}  // namespace

TEST_CASE(
    "with a network, re-routing prefers the peer on the node of the failed worker's "
    "neighbours") {
  // DP 4, PP 2, m 2, worker (2,0) failed; its neighbour (2,1) sits on node 1 with pipeline 3.
  // Micro-batch 0: every peer has load 0; (3,0) is on node 1, so its activations and gradients
  // cost 2 x (10 + 1000) = 2020 ns against 2 x (100 + 10000) for peers 0 and 1: peer 3.
  // Micro-batch 1: peer 3 now has load 1; peers 0 and 1 tie, so the lower index: peer 0.
  const Layout layout{4, 2, 2, 1};
  const std::vector<Route> expected = {{2, 0, 0, 3}, {2, 0, 1, 0}};
  CHECK(balanced_routes(layout, {{2, 0}}, two_pipelines_per_node()) == expected);
  // On a free network only the load counts: peers 0, then 1.
  const std::vector<Route> free = {{2, 0, 0, 0}, {2, 0, 1, 1}};
  CHECK(balanced_routes(layout, {{2, 0}}) == free);
  // Pipelines sharing nodes are not interchangeable: the plan keeps the failure's own labels.
  RecycleOptions options;
  options.layout = layout;
  options.failed = {{2, 0}};
  options.model = two_pipelines_per_node();
  const RecyclePlan p = plan_recycle(options);
  REQUIRE(p.feasible);
  CHECK(p.schedule.routes == expected);
  CHECK_MESSAGE(validate(p.schedule).empty(), describe(validate(p.schedule)));
  // Nor can a plan table hold one plan per relabelled failure set.
  CHECK_THROWS_WITH_AS((void)build_plan_table(options, 1),
                       "--profile: a plan table stores one plan per failure set up to relabelling "
                       "the pipelines, which needs each pipeline on whole nodes of its own: pp 2 x "
                       "tensor parallel 2 GPUs is not a multiple of the 8 GPUs per node",
                       recycle::InputError);
}

namespace {

/// Nodes of 8 GPUs, 200 GB/s inside a node and 25 GB/s between nodes, 5 us and 20 us latency.
recycle::profiles::HardwareSpec two_tier_hardware() {
  recycle::profiles::HardwareSpec hw;
  hw.gpus_per_node = 8;
  hw.intra_node_bandwidth = 2e11;
  hw.inter_node_bandwidth = 2.5e10;
  hw.intra_node_latency = 5'000;
  hw.inter_node_latency = 20'000;
  return hw;
}

}  // namespace

TEST_CASE("with a network, the plan's estimate is its steady state on the network it runs on") {
  // Four stages, 1 GB between stages over 25 GB/s between nodes (40 ms a transfer, more than a
  // stage's F + I + W of 30 ms), each pipeline on two nodes of its own.
  CostModel model = CostModel::compute_only(Costs::uniform(4, {10'000'000, 12'000'000, 8'000'000}));
  model.output_bytes.assign(4, 1'000'000'000);
  const recycle::profiles::HardwareSpec hw = two_tier_hardware();
  model.cluster = Cluster(hw, 4, 4);
  for (const auto& [network, eager] :
       {std::pair{Network::kRuntime, false}, std::pair{Network::kRuntime, true},
        std::pair{Network::kDirect, false}}) {
    CAPTURE(eager);
    RecycleOptions options;
    options.layout = {4, 4, 8, 1};
    options.failed = {{1, 2}};
    options.model = model;
    options.run.network = network;
    options.run.eager_sends = eager;
    const RecyclePlan p = plan_recycle(options);
    REQUIRE(p.feasible);
    const auto on_its_network = network == Network::kDirect
                                    ? direct_steady_state(p.schedule, model)
                                    : steady_state(p.schedule, model, options.run);
    REQUIRE(on_its_network.has_value());
    CHECK(p.estimate.period == on_its_network->period);
    CHECK(p.estimate.makespan == on_its_network->makespan);
  }
}

TEST_CASE("normalization: relabelled failure sets give relabelled plans") {
  const Layout layout{4, 4, 4, 1};
  const std::vector<WorkerId> failed = {{0, 1}, {2, 3}, {2, 0}};
  const std::vector<std::int32_t> permutation = {3, 0, 1, 2};  // dp d -> permutation[d]
  std::vector<WorkerId> moved;
  for (const WorkerId& w : failed)
    moved.push_back({permutation[static_cast<std::size_t>(w.dp)], w.stage});
  std::sort(moved.begin(), moved.end());
  const Schedule a = relabel(plan(layout, failed).schedule, permutation);
  const Schedule b = plan(layout, moved).schedule;
  CHECK(canonicalize(failed, layout).key == canonicalize(moved, layout).key);
  CHECK(a.failed == b.failed);
  CHECK(a.routes == b.routes);
  REQUIRE(a.workers.size() == b.workers.size());
  for (std::size_t w = 0; w < a.workers.size(); ++w) {
    CHECK(a.workers[w].id == b.workers[w].id);
    CHECK(a.workers[w].actions == b.workers[w].actions);
  }
}

TEST_CASE("canonical failure sets of pp 2, dp 2, up to 2 failures: counted by hand") {
  // {}; {0:0}; {0:1}; {0:0,0:1} (one pipeline loses both stages); {0:0,1:1}. Two failures in one
  // stage would leave it no replica; {0:1,1:0} is {0:0,1:1} relabelled.
  const auto sets = canonical_failure_sets({2, 2, 2, 1}, 2, 1000);
  CHECK(sets.size() == 5);
  std::vector<std::string> keys;
  for (const auto& s : sets) {
    const auto c = canonicalize(s, {2, 2, 2, 1});
    CHECK(c.failed == s);  // already canonical
    keys.push_back(c.key);
  }
  std::sort(keys.begin(), keys.end());
  CHECK(std::adjacent_find(keys.begin(), keys.end()) == keys.end());
  CHECK_THROWS_AS((void)canonical_failure_sets({8, 8, 8, 1}, 4, 10), recycle::InputError);
}

TEST_CASE("plan-table lookups equal direct plans") {
  const Layout layout{3, 3, 4, 1};
  RecycleOptions base;
  base.layout = layout;
  const PlanTable table = build_plan_table(base, 2);
  for (const std::vector<WorkerId>& failed : std::vector<std::vector<WorkerId>>{
           {}, {{2, 1}}, {{0, 0}, {1, 2}}, {{1, 0}, {1, 2}}, {{2, 2}, {0, 2}}}) {
    const auto looked_up = lookup(table, failed);
    REQUIRE(looked_up.has_value());
    const RecyclePlan direct = plan(layout, failed);
    CHECK(looked_up->schedule.routes == direct.schedule.routes);
    REQUIRE(looked_up->schedule.workers.size() == direct.schedule.workers.size());
    for (std::size_t w = 0; w < direct.schedule.workers.size(); ++w) {
      CHECK(looked_up->schedule.workers[w].actions == direct.schedule.workers[w].actions);
    }
  }
  CHECK_FALSE(lookup(table, {{0, 0}, {1, 1}, {2, 2}}).has_value());  // 3 failures: beyond the table
}

TEST_CASE("infeasible when every replica of a stage is down") {
  const RecyclePlan p = plan({2, 4, 4, 1}, {{0, 2}, {1, 2}});
  CHECK_FALSE(p.feasible);
  CHECK(p.dead_stage == 2);
  CHECK(p.reason.find("stage 2 has no live worker") != std::string::npos);
}

TEST_CASE("without failures and with 2pp of memory ReCycle has no bubble: a period of m(F+I+W)") {
  // Staggered, each worker's period is at least its work, m(F + I + W) = 3m with F = I = W = 1.
  // Stage 0 must also wait between its first F and its first I for the chain of pp Fs and pp - 1
  // Is (2pp - 1): with 2pp micro-batches of memory and m >= 2pp it fills that wait with its own
  // Fs, so 3m is the lower bound. The fault-free orders among the candidates (split 1F1B, ZB-H1)
  // hold pp and idle pp - 1 of every period (3m + pp - 1): only the list schedules and the search
  // can reach 3m.
  for (std::int32_t pp : {2, 4, 8}) {
    for (std::int32_t m : {2 * pp, 4 * pp}) {
      CAPTURE(pp);
      CAPTURE(m);
      RecycleOptions options;
      options.layout = {2, pp, m, 1};
      options.memory_limit = 2 * pp;
      const RecyclePlan p = plan_recycle(options);
      REQUIRE(p.feasible);
      CHECK(p.estimate.period == 3 * m);
      CHECK(validate(p.schedule, {2 * pp}).empty());
    }
  }
}

TEST_CASE(
    "one failure at PP 8, DP 8, 8 micro-batches: ReCycle's period stays within 5% of the job's "
    "fault-free 1F1B, any stage") {
  // The paper's comparison: a 1F1B job, one worker lost. Fault-free 1F1B: (8 + 8 - 1) x 3 = 45
  // time units per iteration (barrier optimizer, no optimizer time).
  const Nanos one_f_one_b = 45;
  for (std::int32_t s = 0; s < 8; ++s) {
    CAPTURE(s);
    CHECK(plan({8, 8, 8, 1}, {{3, s}}).estimate.period * 100 <= one_f_one_b * 105);
  }
}

TEST_CASE(
    "one failure costs at most the work it adds to the busiest peer, over ReCycle's own fault-free "
    "plan") {
  // Measured against ReCycle's own fault-free plan (split backward, the same optimizer mode), not
  // 1F1B's, whose bubble hides the failure's cost. PP 8, DP 8, 8 micro-batches, F = I = W = 1,
  // memory 2pp = 16 micro-batches (room for the re-routed micro-batches' activations). The failed
  // worker's 8 micro-batches go to its 7 live peers: the busiest takes ceil(8 / 7) = 2 more, so it
  // computes 10 x 3 = 30 units (no plan is shorter) and 2 x 3 = 6 more than without the failure
  // (a plan that packs them into its bubbles costs no more than that).
  const Layout layout{8, 8, 8, 1};
  for (const bool staggered : {false, true}) {
    CAPTURE(staggered);
    RecycleOptions options;
    options.layout = layout;
    options.memory_limit = 16;
    options.staggered_optimizer = staggered;
    options.model = CostModel::compute_only(Costs::uniform(8, {1, 1, 1}));
    const Nanos fault_free = plan_recycle(options).estimate.period;
    for (std::int32_t s = 0; s < 8; ++s) {
      CAPTURE(s);
      options.failed = {{3, s}};
      const Nanos period = plan_recycle(options).estimate.period;
      CHECK(period >= 30);
      CHECK(period <= fault_free + 6);
    }
  }
}

TEST_CASE("the naive re-route baseline is valid and not faster than ReCycle") {
  const Layout layout{4, 4, 8, 1};
  for (const auto& failed : failure_sets(layout, 7)) {
    const RecyclePlan naive = plan_naive_reroute(layout, failed);
    REQUIRE(naive.feasible);
    CHECK_MESSAGE(validate(naive.schedule).empty(), describe(validate(naive.schedule)));
    CHECK(makespan(plan(layout, failed).schedule) <= makespan(naive.schedule));
  }
}

TEST_CASE("parse_failures: syntax, range and duplicates") {
  const Layout layout{4, 4, 8, 1};
  CHECK(parse_failures("2:1,0:3", layout) == std::vector<WorkerId>{{0, 3}, {2, 1}});
  CHECK(parse_failures("", layout).empty());
  CHECK_THROWS_WITH_AS((void)parse_failures("4:0", layout),
                       "--fail: worker 4:0 is outside the layout (dp 0..3, stage 0..3)",
                       recycle::InputError);
  CHECK_THROWS_WITH_AS((void)parse_failures("1:1,1:1", layout),
                       "--fail: worker 1:1 is listed twice", recycle::InputError);
  CHECK_THROWS_WITH_AS((void)parse_failures("1-1", layout),
                       "--fail: expected DP:STAGE pairs separated by commas, got '1-1'",
                       recycle::InputError);
  CHECK_THROWS_AS((void)parse_failures("a:1", layout), recycle::InputError);
}

namespace {

/// A random layout above kTimedActions with random costs and one to three failures.
RecycleOptions large_instance(recycle::Rng& rng) {
  const auto draw = [&](std::uint64_t n) { return static_cast<std::int32_t>(rng.below(n)); };
  RecycleOptions options;
  for (;;) {
    const std::int32_t pp = 8 << draw(2);
    options.layout = {32 << draw(3), pp, pp * (1 + draw(4)), 1};
    if (3LL * options.layout.dp * pp * options.layout.microbatches > kTimedActions) break;
  }
  const Layout& layout = options.layout;
  options.model =
      CostModel::compute_only(Costs::uniform(layout.pp, {1 + draw(4), 1 + draw(5), 1 + draw(4)}));
  const std::int32_t count = 1 + draw(3);  // without failures one pipeline is planned
  while (static_cast<std::int32_t>(options.failed.size()) < count) {
    const WorkerId w{draw(static_cast<std::uint64_t>(layout.dp)),
                     draw(static_cast<std::uint64_t>(layout.pp))};
    if (std::find(options.failed.begin(), options.failed.end(), w) == options.failed.end())
      options.failed.push_back(w);
  }
  options.failed = canonicalize(options.failed, layout).failed;  // plan_recycle's own labels
  return options;
}

}  // namespace

TEST_CASE("large layouts: candidates compared by their first iteration, the chosen one timed") {
  // dp 32, pp 16, m 72: 110,592 actions, above kTimedActions.
  RecycleOptions options;
  options.layout = {32, 16, 72, 1};
  options.failed = {{0, 3}, {1, 9}};
  options.model = CostModel::compute_only(Costs::uniform(16, {2, 3, 2}));
  const RecyclePlan p = plan_recycle(options);
  REQUIRE(p.feasible);
  CHECK_MESSAGE(validate(p.schedule).empty(), describe(validate(p.schedule)));
  // The estimate is the plan's own steady state (not its first iteration's upper bound).
  const auto timed = direct_steady_state(p.schedule, options.model);
  REQUIRE(timed.has_value());
  CHECK(p.estimate.makespan == timed->makespan);
  CHECK(p.estimate.period == timed->period);
  CHECK(p.estimate.iterations == timed->iterations);
  CHECK(p.estimate.settled);
  // timed_actions lowers the threshold: the same layout below it, compared the fast way, keeps a
  // real period too, and the full comparison of twelve candidates by period is never worse.
  RecycleOptions small = options;
  small.layout = {4, 16, 16, 1};
  small.failed = {{0, 3}, {1, 9}};
  small.search_work = 0;
  const RecyclePlan full = plan_recycle(small);
  small.timed_actions = 0;
  const RecyclePlan fast = plan_recycle(small);
  const auto fast_timed = direct_steady_state(fast.schedule, small.model);
  REQUIRE(fast_timed.has_value());
  CHECK(fast.estimate.period == fast_timed->period);
  CHECK(full.estimate.period <= fast.estimate.period);
}

// What docs/recycle.md reports of large layouts: four candidates compared by makespan against
// all twelve compared by period, on 40 random layouts (about a minute, so skipped unless asked
// for: recycle_planner_tests -tc="*large-layout*" --no-skip). It checks what holds for every
// plan (the estimate is the first iteration and bounds the period) and prints the gaps.
TEST_CASE("large-layout candidates study (run with --no-skip)" * doctest::skip()) {
  recycle::Rng rng(2611);
  std::int32_t equal = 0, worse = 0;
  double worst = 0;
  std::vector<double> gaps;
  for (std::int32_t n = 0; n < 40; ++n) {
    const RecycleOptions options = large_instance(rng);
    const Layout& layout = options.layout;
    Schedule skeleton;
    skeleton.layout = layout;
    skeleton.failed = options.failed;
    skeleton.routes = balanced_routes(layout, options.failed);
    skeleton.staggered_optimizer = true;
    Nanos best = std::numeric_limits<Nanos>::max();
    std::vector<std::vector<std::int32_t>> limits{uniform_limit(layout, layout.pp),
                                                  one_f_one_b_limit(layout)};
    limits.push_back(one_f_one_b_limit(layout));
    for (std::int32_t& l : limits.back()) l = std::min(l + 2, layout.pp);
    for (const auto& limit : limits) {
      for (const bool weight_waits : {false, true}) {
        for (const bool forward_waits : {false, true}) {
          ListScheduleInput input{&skeleton, &options.model.compute, limit, true,
                                  false,     weight_waits,           {}};
          input.forward_waits_for_gradient = forward_waits;
          input.network = &options.model;
          Schedule s = skeleton;
          s.workers = list_schedule(input).workers;
          best = std::min(best, direct_steady_state(s, options.model)->period);
        }
      }
    }
    const RecyclePlan p = plan_recycle(options);
    const auto timed = direct_steady_state(p.schedule, options.model);
    REQUIRE(timed.has_value());
    CHECK(p.estimate.makespan == timed->makespan);
    CHECK(timed->period <= p.estimate.period);
    const Nanos chosen = timed->period;
    const double gap = static_cast<double>(chosen) / static_cast<double>(best) - 1;
    gaps.push_back(gap);
    equal += chosen == best ? 1 : 0;
    worse += chosen > best ? 1 : 0;
    worst = std::max(worst, gap);
  }
  std::sort(gaps.begin(), gaps.end());
  MESSAGE("large layouts: the plan's period equals the best of twelve candidates in "
          << equal << " of " << gaps.size() << ", is above it in " << worse << " (90th percentile "
          << 100 * gaps[gaps.size() * 9 / 10] << " %, at most " << 100 * worst << " %)");
}

TEST_CASE("the period ceiling from one list schedule is never below the plan's period") {
  // recycle_period_ceiling bounds what plan_recycle estimates on the direct network, whichever
  // candidate wins and whatever the search finds. A long optimizer step (40 units against a stage's
  // 3 per micro-batch) and slow all-reduces make the staggered period exceed the computes'
  // makespan, so a ceiling that left them out would fail here.
  CostModel slow = CostModel::compute_only(Costs::uniform(4, {1'000, 2'000, 1'000}));
  slow.compute.optimizer.assign(4, 40'000);
  slow.param_bytes.assign(4, 1'000'000'000);
  slow.output_bytes.assign(4, 10'000'000);
  const recycle::profiles::HardwareSpec hw = two_tier_hardware();
  slow.cluster = Cluster(hw, 8, 4);
  const std::vector<std::vector<WorkerId>> failure_sets{
      {{1, 2}}, {{0, 0}, {2, 3}}, {{0, 1}, {1, 1}, {3, 2}}, {{1, 0}, {2, 1}, {3, 3}}};
  std::int32_t checked = 0;
  for (const auto& [base, interleave] :
       {std::pair{"1f1b", 1}, std::pair{"interleaved", 2}, std::pair{"zb-v", 2}}) {
    for (const bool staggered : {true, false}) {
      for (const std::int64_t work : {std::int64_t{0}, std::int64_t{2'000'000}}) {
        for (const auto& failed : failure_sets) {
          for (const CostModel* model :
               {static_cast<const CostModel*>(&slow), static_cast<const CostModel*>(nullptr)}) {
            RecycleOptions options;
            options.layout = layout_for(base, Layout{4, 4, 8, interleave});
            options.base = base;
            options.failed = failed;
            if (model != nullptr) {
              options.model = *model;
              if (interleave > 1) options.model.compute = Costs::uniform(8, {500, 1'000, 500});
              if (interleave > 1) options.model.compute.optimizer.assign(4, 40'000);
            }
            options.staggered_optimizer = staggered;
            options.search_work = work;
            options.timed_actions = 0;
            options.run.network = Network::kDirect;
            CAPTURE(base);
            CAPTURE(staggered);
            CAPTURE(work);
            CAPTURE(failed.size());
            CAPTURE(model != nullptr);
            const std::optional<Nanos> ceiling = recycle_period_ceiling(options);
            REQUIRE(ceiling.has_value());
            const RecyclePlan plan = plan_recycle(options);
            REQUIRE(plan.feasible);
            CHECK(plan.estimate.period <= *ceiling);
            ++checked;
          }
        }
      }
    }
  }
  CHECK(checked == 3 * 2 * 2 * 4 * 2);
  // No ceiling where the plan is ranked on another network, on a 2bw base, or without failures.
  RecycleOptions options;
  options.layout = {4, 4, 8, 1};
  options.failed = {{1, 2}};
  options.model = slow;
  options.run.network = Network::kRuntime;
  CHECK_FALSE(recycle_period_ceiling(options).has_value());
  options.run.network = Network::kDirect;
  options.base = "2bw";
  CHECK_FALSE(recycle_period_ceiling(options).has_value());
  options.base = "1f1b";
  options.failed.clear();
  CHECK_FALSE(recycle_period_ceiling(options).has_value());
}

TEST_CASE("a plan started from a memo of the unsearched plan's candidates is the plan made anew") {
  // The replay plans a failure set without the search, then with it; the second starts from the
  // first's candidates (CandidateMemo). Every base, both optimizer modes, a network with slow
  // all-reduces and a free one, relabelled failure sets (the memo holds canonical labels).
  CostModel slow = CostModel::compute_only(Costs::uniform(4, {1'000, 2'000, 1'000}));
  slow.compute.optimizer.assign(4, 4'000);
  slow.param_bytes.assign(4, 100'000'000);
  slow.output_bytes.assign(4, 10'000'000);
  slow.cluster = Cluster(two_tier_hardware(), 8, 4);
  const std::vector<std::vector<WorkerId>> failure_sets{
      {{1, 2}}, {{2, 2}}, {{0, 0}, {2, 3}}, {{0, 1}, {1, 1}, {3, 2}}};
  std::int32_t from_memo = 0;
  for (const auto& [base, interleave] : {std::pair{"1f1b", 1}, std::pair{"interleaved", 2},
                                         std::pair{"zb-v", 2}, std::pair{"2bw", 1}}) {
    for (const bool staggered : {true, false}) {
      for (const auto& failed : failure_sets) {
        for (const bool network : {true, false}) {
          RecycleOptions options;
          options.layout = layout_for(base, Layout{4, 4, 8, interleave});
          options.base = base;
          options.failed = failed;
          if (network) {
            options.model = slow;
            if (interleave > 1) options.model.compute = Costs::uniform(8, {500, 1'000, 500});
            if (interleave > 1) options.model.compute.optimizer.assign(4, 4'000);
          }
          options.staggered_optimizer = staggered;
          options.timed_actions = 0;
          options.run.network = Network::kDirect;
          options.search_work = 2'000'000;
          CAPTURE(base);
          CAPTURE(staggered);
          CAPTURE(failed.size());
          CAPTURE(network);
          const RecyclePlan anew = plan_recycle(options);
          CandidateMemo memo;
          RecycleOptions unsearched = options;
          unsearched.search_work = 0;
          unsearched.memo = &memo;
          const RecyclePlan first = plan_recycle(unsearched);
          REQUIRE(memo.filled);
          // The memo holds what the unsearched plan chose.
          RecycleOptions again = unsearched;
          again.memo = nullptr;
          CHECK(plan_recycle(again).schedule == first.schedule);
          options.memo = &memo;
          const RecyclePlan searched = plan_recycle(options);
          CHECK(searched.schedule == anew.schedule);
          CHECK(searched.estimate.period == anew.estimate.period);
          CHECK(searched.estimate.makespan == anew.estimate.makespan);
          ++from_memo;
        }
      }
    }
  }
  CHECK(from_memo == 4 * 2 * 4 * 2);
  // The memo is what the second plan starts from: one that says its orders take a unit longer
  // gives a plan that says so.
  RecycleOptions options;
  options.layout = {4, 4, 8, 1};
  options.failed = {{1, 2}};
  options.search_work = 0;
  CandidateMemo memo;
  options.memo = &memo;
  const RecyclePlan first = plan_recycle(options);
  REQUIRE(memo.filled);
  memo.estimate.period += 1;
  CHECK(plan_recycle(options).estimate.period == first.estimate.period + 1);
}
