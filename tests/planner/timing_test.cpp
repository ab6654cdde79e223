// As-soon-as-possible timing: makespans against the closed forms of the papers, and small cases
// timed by hand.
#include <doctest/doctest.h>

#include "tests/planner/test_helpers.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "planner/generators.hpp"
#include "planner/language/lower.hpp"
#include "planner/language/timing.hpp"

namespace {

using namespace recycle::planner;
using namespace recycle::planner::testing;
using recycle::Nanos;

Nanos makespan(const Schedule& schedule, const Costs& costs) {
  const auto timeline = compute_timeline(schedule, costs);
  REQUIRE(timeline.has_value());
  return timeline->makespan;
}

}  // namespace

TEST_CASE("1F1B and GPipe: makespan (M + P - 1)(F + I + W)") {
  const Nanos f = 3, i = 4, w = 2;
  for (const std::int32_t p : {1, 2, 3, 4, 8}) {
    for (const std::int32_t m : {1, 2, p, 2 * p, 3 * p + 1}) {
      for (const std::string name : {"gpipe", "1f1b"}) {
        CAPTURE(name);
        CAPTURE(p);
        CAPTURE(m);
        const Costs costs = Costs::uniform(p, {f, i, w});
        CHECK(makespan(generate(name, Layout{2, p, m, 1}), costs) == (m + p - 1) * (f + i + w));
      }
    }
  }
}

TEST_CASE("ZB-H1: makespan M(F + I + W) + (P - 1)(F + I - W) for M >= P") {
  // The Zero Bubble paper states it for F = I = W; it holds as well with F = I > W and F < I.
  for (const StageCost cost : {StageCost{3, 3, 3}, StageCost{2, 2, 1}, StageCost{4, 4, 3},
                               StageCost{3, 3, 1}, StageCost{3, 4, 2}}) {
    const Nanos f = cost.forward, i = cost.backward_input, w = cost.backward_weight;
    for (const std::int32_t p : {1, 2, 3, 4, 8}) {
      for (const std::int32_t m : {p, p + 1, 2 * p, 3 * p + 1}) {
        CAPTURE(f);
        CAPTURE(i);
        CAPTURE(w);
        CAPTURE(p);
        CAPTURE(m);
        const Costs costs = Costs::uniform(p, cost);
        CHECK(makespan(generate("zb-h1", Layout{1, p, m, 1}), costs) ==
              m * (f + i + w) + (p - 1) * (f + i - w));
      }
    }
  }
}

TEST_CASE(
    "ZB-H2: never slower than ZB-H1 for M > P, M(F + I + W) + (P - 1)F for F = I = 2, W = 1, M >= "
    "2P") {
  for (const std::int32_t p : {1, 2, 3, 4, 8}) {
    for (const std::int32_t m : {p + 1, 2 * p, 2 * p + 1, 3 * p + 1}) {
      for (const StageCost cost :
           {StageCost{2, 2, 1}, StageCost{3, 4, 2}, StageCost{3, 3, 3}, StageCost{4, 4, 3}}) {
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(cost.forward);
        CAPTURE(cost.backward_input);
        CAPTURE(cost.backward_weight);
        const Costs costs = Costs::uniform(p, cost);
        const Nanos h2 = makespan(generate("zb-h2", Layout{1, p, m, 1}, costs), costs);
        CHECK(h2 <= makespan(generate("zb-h1", Layout{1, p, m, 1}), costs));
        if (cost == StageCost{2, 2, 1} && m >= 2 * p) CHECK(h2 == m * (2 + 2 + 1) + (p - 1) * 2);
      }
    }
  }
}

// Known gap, kept visible: with M == P the list scheduler can start a W just before a more urgent
// I's gradient arrives (it does not look ahead), and ZB-H2 ends up behind ZB-H1. With F=I=4, W=3,
// P=M=4, ZB-H1 takes M(F+I+W) + (P-1)(F+I-W) = 44 + 15 = 59.
TEST_CASE("ZB-H2 is not slower than ZB-H1 at M == P") {
  for (const std::int32_t p : {4, 8}) {
    CAPTURE(p);
    const Costs costs = Costs::uniform(p, {4, 4, 3});
    const Nanos h1 = p * 11 + (p - 1) * 5;
    CHECK(makespan(generate("zb-h1", Layout{1, p, p, 1}), costs) == h1);
    CHECK(makespan(generate("zb-h2", Layout{1, p, p, 1}, costs), costs) <= h1);
  }
}

TEST_CASE("1F1B with P = 2, M = 1, timed by hand") {
  // F=3, I=4, W=2: stage 0 F [0,3]; stage 1 F [3,6], B [6,12]; stage 0 B [12,18].
  const Schedule schedule = generate("1f1b", Layout{1, 2, 1, 1});
  const auto timeline = compute_timeline(schedule, Costs::uniform(2, {3, 4, 2}));
  REQUIRE(timeline.has_value());
  REQUIRE(timeline->workers.size() == 2);
  const auto& s0 = timeline->workers[0];
  const auto& s1 = timeline->workers[1];
  CHECK(s0[0].start == 0);
  CHECK(s0[0].end == 3);
  CHECK(s1[0].start == 3);
  CHECK(s1[0].end == 6);
  CHECK(s1[1].start == 6);
  CHECK(s1[1].end == 12);
  CHECK(s0[1].start == 12);
  CHECK(s0[1].end == 18);
  CHECK(timeline->makespan == 18);
}

TEST_CASE("ZB-H1 with P = 2, M = 2, timed by hand") {
  // F=3, I=4, W=2. Stage 0: F0 F1 I0 W0 I1 W1; stage 1 holds back its first W:
  // F0 I0 F1 I1 W0 W1.
  //   s0 F0 [0,3]  F1 [3,6]
  //   s1 F0 [3,6]  I0 [6,10]  F1 [10,13]  I1 [13,17]  W0 [17,19]  W1 [19,21]
  //   s0 I0 [10,14]  W0 [14,16]  I1 [17,21]  W1 [21,23]
  // 23 = M(F+I+W) + (P-1)(F+I-W) = 2*9 + 5.
  const Schedule schedule = generate("zb-h1", Layout{1, 2, 2, 1});
  REQUIRE(schedule.workers[0].actions == std::vector<Action>{act(F, 0, 0), act(F, 0, 1),
                                                             act(I, 0, 0), act(W, 0, 0),
                                                             act(I, 0, 1), act(W, 0, 1)});
  REQUIRE(schedule.workers[1].actions == std::vector<Action>{act(F, 1, 0), act(I, 1, 0),
                                                             act(F, 1, 1), act(I, 1, 1),
                                                             act(W, 1, 0), act(W, 1, 1)});
  const auto timeline = compute_timeline(schedule, Costs::uniform(2, {3, 4, 2}));
  REQUIRE(timeline.has_value());
  const std::vector<Nanos> s0_starts = {0, 3, 10, 14, 17, 21};
  const std::vector<Nanos> s1_starts = {3, 6, 10, 13, 17, 19};
  for (std::size_t k = 0; k < 6; ++k) {
    CAPTURE(k);
    CHECK(timeline->workers[0][k].start == s0_starts[k]);
    CHECK(timeline->workers[1][k].start == s1_starts[k]);
  }
  CHECK(timeline->makespan == 23);
}

TEST_CASE("a dependency cycle between two workers has no timeline") {
  // Stage 0 waits for B0 from stage 1 before it sends F1; stage 1 wants F1 before it does B0.
  Schedule schedule;
  schedule.layout = Layout{1, 2, 2, 1};
  schedule.workers = {{{0, 0}, {act(F, 0, 0), act(B, 0, 0), act(F, 0, 1), act(B, 0, 1)}},
                      {{0, 1}, {act(F, 1, 1), act(B, 1, 1), act(F, 1, 0), act(B, 1, 0)}}};
  CHECK_FALSE(compute_timeline(schedule, Costs::uniform(2, {1, 1, 1})).has_value());
  // The same lists in a consistent order time fine.
  schedule.workers[1].actions = {act(F, 1, 0), act(B, 1, 0), act(F, 1, 1), act(B, 1, 1)};
  CHECK(compute_timeline(schedule, Costs::uniform(2, {1, 1, 1})).has_value());
}

TEST_CASE("on the direct network a lowered schedule times as its compute-only form") {
  // SEND and RECV move data in no time and make nothing wait: the lowered 1F1B of P = 2, M = 1
  // with F=3, I=4, W=2 is timed as the compute-only one: F [0,3] and B [12,18] on stage 0, F [3,6]
  // and B [6,12] on stage 1. REDUCE_GRAD (free all-reduce) and OPT (1 s each) follow B, OPT after
  // the barrier at 18: [18,19] on both.
  const Schedule schedule = lower(generate("1f1b", Layout{1, 2, 1, 1}));
  const Costs costs = Costs::uniform(2, {3, 4, 2});
  const auto timeline = compute_timeline(schedule, [&](WorkerId, const Action& a) -> Nanos {
    return a.type == ActionType::kOptimizer ? 1 : costs.duration(a);
  });
  REQUIRE(timeline.has_value());
  const auto start_of = [&](std::size_t w, ActionType type) {
    const auto& actions = schedule.workers[w].actions;
    const auto at = std::find_if(actions.begin(), actions.end(),
                                 [type](const Action& a) { return a.type == type; });
    REQUIRE(at != actions.end());
    return timeline->workers[w][static_cast<std::size_t>(at - actions.begin())].start;
  };
  CHECK(start_of(0, F) == 0);
  CHECK(start_of(1, F) == 3);
  CHECK(start_of(1, B) == 6);
  CHECK(start_of(0, B) == 12);
  CHECK(start_of(0, ActionType::kOptimizer) == 18);
  CHECK(start_of(1, ActionType::kOptimizer) == 18);
  CHECK(timeline->makespan == 19);
}

TEST_CASE("REDUCE_GRAD joins the live peers of a stage") {
  // DP 2, PP 1, M 1, GPipe lowered: each worker F B REDUCE_GRAD OPT. Worker (1,0)'s F takes 10
  // instead of 3, B 6, OPT 1; the all-reduce itself is free here (no network). Both REDUCE_GRADs
  // end when the slower peer arrives: max(3 + 6, 10 + 6) = 16; OPT [16, 17] on both.
  const Schedule schedule = lower(generate("gpipe", Layout{2, 1, 1, 1}));
  const auto timeline = compute_timeline(schedule, [](WorkerId id, const Action& a) -> Nanos {
    switch (a.type) {
      case ActionType::kForward:
        return id.dp == 1 ? 10 : 3;
      case ActionType::kBackward:
        return 6;
      case ActionType::kOptimizer:
        return 1;
      default:
        return 0;
    }
  });
  REQUIRE(timeline.has_value());
  for (std::size_t w = 0; w < 2; ++w) {
    CAPTURE(w);
    REQUIRE(timeline->workers[w].size() == 4);
    CHECK(timeline->workers[w][2].end == 16);
    CHECK(timeline->workers[w][3].start == 16);
    CHECK(timeline->workers[w][3].end == 17);
  }
  CHECK(timeline->workers[0][1].end == 9);
  CHECK(timeline->makespan == 17);
}

TEST_CASE("an empty schedule and a schedule of empty workers take no time") {
  Schedule schedule;
  schedule.layout = Layout{1, 2, 1, 1};
  auto timeline = compute_timeline(schedule, Costs::uniform(2, {1, 1, 1}));
  REQUIRE(timeline.has_value());
  CHECK(timeline->makespan == 0);
  schedule.workers = {{{0, 0}, {}}, {{0, 1}, {}}};
  timeline = compute_timeline(schedule, Costs::uniform(2, {1, 1, 1}));
  REQUIRE(timeline.has_value());
  CHECK(timeline->workers.size() == 2);
  CHECK(timeline->makespan == 0);
}

TEST_CASE("ZB-H1 at PP 16, DP 8, 64 micro-batches, lowered: the closed form still holds") {
  // 128 workers of about 450 actions each; F = I = W, so M(F+I+W) + (P-1)F.
  const Schedule schedule = lower(generate("zb-h1", Layout{8, 16, 64, 1}));
  CHECK(makespan(schedule, Costs::uniform(16, {5, 5, 5})) == 64 * 15 + 15 * 5);
}

TEST_CASE("a layout far larger than the schedule's actions times like a small one") {
  // 1000 x 2 x 10000 chunks declared, one micro-batch present: 1F1B with P = 2, M = 1 is
  // F [0,3] on stage 0, F [3,6] and B [6,12] on stage 1, B [12,18] on stage 0.
  Schedule schedule;
  schedule.layout = Layout{1000, 2, 10000, 1};
  schedule.workers = {{{0, 0}, {act(F, 0, 0), act(B, 0, 0)}},
                      {{0, 1}, {act(F, 1, 0), act(B, 1, 0)}}};
  const auto timeline = compute_timeline(schedule, Costs::uniform(2, {3, 4, 2}));
  REQUIRE(timeline.has_value());
  CHECK(timeline->workers[0][1].start == 12);
  CHECK(timeline->makespan == 18);
}
