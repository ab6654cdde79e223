// The list scheduler on its own (no candidates, no search): a small case timed by hand, the F
// look-ahead reaching the staggered period's lower bound where holding every F would not, the
// network's transfer times in its timing, and what every list schedule must be (valid, within its
// per-stage memory, timed as the execution graph times it).
#include "planner/list_scheduler.hpp"

#include <doctest/doctest.h>

#include "tests/planner/test_helpers.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "planner/language/failures.hpp"
#include "planner/language/semantics.hpp"
#include "planner/language/timing.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/period.hpp"

namespace {

using namespace recycle::planner;
using namespace recycle::planner::testing;
using recycle::Nanos;

ListScheduleInput input_for(const Schedule& skel, const Costs& costs,
                            std::vector<std::int32_t> limit) {
  ListScheduleInput input;
  input.skeleton = &skel;
  input.costs = &costs;
  input.memory_limit = std::move(limit);
  return input;
}

}  // namespace

TEST_CASE("list scheduling P = 2, M = 2, F = I = W = 1, memory 2: timed by hand") {
  // Stage 0: F0 [0,1], F1 [1,2], nothing ready at 2 (I0 comes at 3), I0 [3,4], W0 [4,5],
  // I1 [5,6], W1 [6,7]. Stage 1: F0 [1,2], I0 [2,3] (I before anything else), F1 [3,4] (F before
  // its own W0), I1 [4,5], W0 [5,6], W1 [6,7]. Makespan 7, the optimum of plan_exact's test.
  const Schedule skel = skeleton({1, 2, 2, 1});
  const Costs costs = Costs::uniform(2, {1, 1, 1});
  const ListScheduleResult r = list_schedule(input_for(skel, costs, uniform_limit(skel.layout, 2)));
  REQUIRE(r.workers.size() == 2);
  CHECK(r.workers[0].actions == std::vector<Action>{act(F, 0, 0), act(F, 0, 1), act(I, 0, 0),
                                                    act(W, 0, 0), act(I, 0, 1), act(W, 0, 1)});
  CHECK(r.workers[1].actions == std::vector<Action>{act(F, 1, 0), act(I, 1, 0), act(F, 1, 1),
                                                    act(I, 1, 1), act(W, 1, 0), act(W, 1, 1)});
  CHECK(r.makespan == 7);
  // Asked for the makespan alone: the same 7, and no lists.
  ListScheduleInput alone = input_for(skel, costs, uniform_limit(skel.layout, 2));
  alone.makespan_only = true;
  const ListScheduleResult m = list_schedule(alone);
  CHECK(m.makespan == 7);
  CHECK(m.workers.empty());
  CHECK_FALSE(m.gave_up);
}

TEST_CASE("an F that waits for a gradient about to arrive: the staggered period's lower bound") {
  // P = 4, M = 8, F = 2, I = 3, W = 2, memory 8. Stage 0 holds its 8 forwards (16) while its
  // first I waits for the chain F F F F I I I (8 + 9 = 17): at least 1 idle per iteration, so a
  // staggered period of at least 8 x 7 + 1 = 57 (Zero Bubble's bound on this input). Letting
  // the later stages wait for an arriving gradient instead of starting another F reaches it.
  Schedule skel = skeleton({1, 4, 8, 1});
  skel.staggered_optimizer = true;
  const Costs costs = Costs::uniform(4, {2, 3, 2});
  ListScheduleInput input = input_for(skel, costs, uniform_limit(skel.layout, 8));
  input.forward_waits_for_gradient = true;
  Schedule out = skel;
  out.workers = list_schedule(input).workers;
  const auto steady = direct_steady_state(out, CostModel::compute_only(costs));
  REQUIRE(steady.has_value());
  CHECK(steady->period == 57);
}

TEST_CASE("list scheduling charges a transfer between workers on the model's network") {
  // P = 2, M = 1, F = 3, I = 4, W = 2, every transfer 5 ns (latency, each stage on its own node):
  // stage 0 F [0,3]; stage 1 F [8,11], I [11,15], W [15,17]; stage 0 I [20,24], W [24,26].
  const Schedule skel = skeleton({1, 2, 1, 1});
  const Costs costs = Costs::uniform(2, {3, 4, 2});
  CostModel model = CostModel::compute_only(costs);
  model.output_bytes = {1, 1};
  recycle::profiles::HardwareSpec hw;
  hw.gpus_per_node = 1;
  hw.intra_node_latency = hw.inter_node_latency = 5;
  model.cluster = Cluster(hw, 1, 2);
  ListScheduleInput input = input_for(skel, costs, uniform_limit(skel.layout, 1));
  input.network = &model;
  const ListScheduleResult r = list_schedule(input);
  CHECK(r.makespan == 26);
  Schedule out = skel;
  out.workers = r.workers;
  CHECK(direct_steady_state(out, model)->makespan == 26);
}

TEST_CASE(
    "every list schedule is valid, within its per-stage memory, and timed as the graph "
    "times it") {
  struct Case {
    Layout layout;
    const char* failed;
    std::vector<std::int32_t> limit;
    StageCost cost;
  };
  for (const Case& c : {Case{{2, 3, 4, 1}, "0:1", {3, 2, 1}, {1, 2, 1}},
                        Case{{3, 3, 6, 1}, "0:0,1:1", {2, 2, 2}, {1, 1, 1}},
                        Case{{4, 4, 4, 1}, "0:1,1:2,2:3", {4, 3, 2, 1}, {2, 3, 1}},
                        Case{{3, 4, 6, 1}, "0:1,0:2", {8, 8, 8, 8}, {1, 2, 1}},
                        Case{{1, 4, 8, 1}, "", {7, 7, 7, 7}, {2, 3, 2}}}) {
    for (const bool weight_waits : {false, true}) {
      for (const bool forward_waits : {false, true}) {
        CAPTURE(c.failed);
        CAPTURE(weight_waits);
        CAPTURE(forward_waits);
        const Schedule skel = skeleton(c.layout, c.failed);
        const Costs costs = Costs::uniform(c.layout.pp, c.cost);
        ListScheduleInput input = input_for(skel, costs, c.limit);
        input.wait_for_gradient = weight_waits;
        input.forward_waits_for_gradient = forward_waits;
        const ListScheduleResult r = list_schedule(input);
        Schedule out = skel;
        out.workers = r.workers;
        CHECK(show(validate(out)).empty());
        for (const WorkerSchedule& w : out.workers) {
          std::int32_t held = 0, peak = 0;
          for (const Action& a : w.actions) peak = std::max(peak, held += held_delta(a.type));
          CHECK(peak <= c.limit[static_cast<std::size_t>(w.id.stage)]);
        }
        const auto timeline = compute_timeline(out, costs);
        REQUIRE(timeline.has_value());
        CHECK(timeline->makespan == r.makespan);
      }
    }
  }
}

TEST_CASE("stand-ins for untouched pipelines give the lists of scheduling every pipeline") {
  // The reference schedules every pipeline itself. Pipelines that differ in their node pairing
  // (PP 3 on 2-GPU nodes: pipeline 0 pairs stages 0-1 on a node, pipeline 1 pairs stages 1-2)
  // or in how their micro-batches rank must not stand in for one another.
  struct Case {
    Layout layout;
    const char* failed;
    std::int32_t gpus_per_node;  ///< 0: a free network
    bool ranked;  ///< ties by per-pipeline ranks (two patterns) instead of the default
  };
  for (const Case& c : {Case{{8, 4, 8, 1}, "", 0, false}, Case{{8, 4, 3, 1}, "1:2", 0, false},
                        Case{{8, 4, 2, 1}, "0:0,2:3", 0, true}, Case{{9, 3, 6, 1}, "", 2, false},
                        Case{{9, 3, 6, 1}, "", 2, true}, Case{{9, 3, 3, 1}, "4:1", 2, true},
                        Case{{9, 4, 2, 1}, "0:1,1:2", 2, false},
                        Case{{6, 2, 3, 1}, "0:0,1:0,2:0,3:0,4:0", 0, false}}) {
    CAPTURE(c.failed);
    CAPTURE(c.gpus_per_node);
    const Schedule skel = skeleton(c.layout, c.failed);
    const Costs costs = Costs::uniform(c.layout.pp, {3, 4, 2});
    CostModel model = CostModel::compute_only(costs);
    if (c.gpus_per_node > 0) {
      model.output_bytes.assign(static_cast<std::size_t>(c.layout.pp), 1);
      recycle::profiles::HardwareSpec hw;
      hw.gpus_per_node = c.gpus_per_node;
      hw.intra_node_latency = 1;
      hw.inter_node_latency = 5;
      model.cluster = Cluster(hw, 1, c.layout.pp);
    }
    ListScheduleInput input = input_for(skel, costs, uniform_limit(skel.layout, 3));
    input.network = &model;
    if (c.ranked) {
      // Pipelines alternate between ranking their micro-batches forwards and backwards.
      for (std::int32_t d = 0; d < c.layout.dp; ++d) {
        for (std::int32_t mb = 0; mb < c.layout.microbatches; ++mb)
          input.rank.push_back(d % 2 == 0 ? d * c.layout.microbatches + mb
                                          : (d + 1) * c.layout.microbatches - 1 - mb);
      }
    }
    ListScheduleInput reference = input;
    reference.stand_ins = false;
    const ListScheduleResult want = list_schedule(reference);
    const ListScheduleResult got = list_schedule(input);
    CHECK(got.makespan == want.makespan);
    REQUIRE(got.workers.size() == want.workers.size());
    for (std::size_t w = 0; w < got.workers.size(); ++w) {
      CAPTURE(w);
      CHECK(got.workers[w] == want.workers[w]);
    }
    // Giving up: at the makespan it always does (with a bound no higher than the makespan); one
    // above it, never (and the lists are the same).
    ListScheduleInput at = input;
    at.give_up_at = want.makespan;
    const ListScheduleResult stopped = list_schedule(at);
    CHECK(stopped.gave_up);
    CHECK(stopped.makespan >= at.give_up_at);
    CHECK(stopped.makespan <= want.makespan);
    CHECK(stopped.workers.empty());
    ListScheduleInput above = input;
    above.give_up_at = want.makespan + 1;
    const ListScheduleResult full = list_schedule(above);
    CHECK_FALSE(full.gave_up);
    CHECK(full.makespan == want.makespan);
    CHECK(full.workers == want.workers);
  }
}
