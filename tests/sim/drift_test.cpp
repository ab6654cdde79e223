// Schedules on which the validator and the simulator used to disagree, because each had its own
// copy of the rules: now both read planner/language/semantics.hpp and
// planner/language/execution_graph.hpp, and for each case here the validator's verdict and the
// simulator's agree.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "planner/generators.hpp"
#include "planner/language/lower.hpp"
#include "planner/language/validator.hpp"
#include "planner/timing/cost_graph.hpp"
#include "profiles/profile.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"

namespace {

using namespace recycle;
using planner::Action;
using planner::ActionType;
using planner::Layout;

planner::Schedule generate(const std::string& name, Layout layout) {
  planner::GeneratorOptions gen;
  gen.layout = layout;
  return planner::generate_fault_free(name, gen);
}

bool has(const std::vector<planner::Violation>& violations, planner::Rule rule,
         const std::string& text) {
  return std::any_of(violations.begin(), violations.end(), [&](const planner::Violation& v) {
    return v.rule == rule && v.message.find(text) != std::string::npos;
  });
}

std::string show(const std::vector<planner::Violation>& violations) {
  std::string out;
  for (const auto& v : violations)
    out += std::string(planner::rule_name(v.rule)) + ": " + v.message + "\n";
  return out;
}

planner::CostModel unit(const Layout& layout) {
  return planner::CostModel::compute_only(planner::Costs::uniform(
      layout.virtual_stages(), {kNanosPerSecond, kNanosPerSecond, kNanosPerSecond}));
}

}  // namespace

TEST_CASE("REDUCE_GRAD and OPT without SEND/RECV: a lowered schedule whose data never moves") {
  // 1F1B pp 4 m 8 with REDUCE_GRAD and OPT appended to every worker: it says how it
  // communicates, and it does not. Before, the validator took it as compute-only (valid) while
  // the simulator took it as lowered, with nothing to wait for: 24 s instead of 33 s.
  const Layout layout{1, 4, 8, 1};
  planner::Schedule s = generate("1f1b", layout);
  for (auto& w : s.workers) {
    w.actions.push_back({ActionType::kReduceGrad, w.id.stage, -1, w.id.dp});
    w.actions.push_back({ActionType::kOptimizer, w.id.stage, -1, w.id.dp});
  }
  const auto violations = planner::validate(s);
  INFO(show(violations));
  CHECK(has(violations, planner::Rule::kComm,
            "but there is neither a SEND_F there nor a RECV_F here"));
  CHECK_THROWS_WITH_AS((void)sim::simulate(s, unit(layout), {.source = "s.json"}),
                       "s.json: worker (0,0) action 0B0: needs data made on worker (0,1) but "
                       "lists no 0RECV_B0",
                       InputError);
}

TEST_CASE("a barrier schedule whose last stage steps before it sends its gradient") {
  // Lowered 1F1B pp 2 m 1: stage 1 runs ... 1B0 1OPT 1SEND_B0: its OPT waits for the barrier,
  // which waits for stage 0's, which waits for the gradient stage 1 sends after its OPT. Before,
  // the validator passed it and the simulator hung in a deadlock.
  const Layout layout{1, 2, 1, 1};
  planner::Schedule s = planner::lower(generate("1f1b", layout));
  auto& actions = s.workers[1].actions;  // 1RECV_F0 1F0 1B0 1SEND_B0 1REDUCE_GRAD 1OPT
  REQUIRE(actions[3].type == ActionType::kSendB);
  std::rotate(actions.begin() + 3, actions.begin() + 4, actions.end());  // SEND_B0 last
  const auto violations = planner::validate(s);
  INFO(show(violations));
  CHECK(has(violations, planner::Rule::kIteration, "OPT must end the worker's list"));
  CHECK(has(violations, planner::Rule::kDeadlock, "the optimizer barrier"));
  CHECK_THROWS_WITH_AS(
      (void)sim::simulate(s, unit(layout), {.source = "s.json"}),
      "s.json: the schedule deadlocks: worker (0,0) action 0RECV_B0 of iteration 1 never completes "
      "(1 more workers stuck); `recycle plan --check` says why",
      InputError);
  // With a staggered optimizer nothing waits for the barrier: the step just comes early.
  s.staggered_optimizer = true;
  CHECK_FALSE(has(planner::validate(s), planner::Rule::kDeadlock, ""));
}

TEST_CASE("one worker's OPT deleted from a lowered schedule") {
  // Before, accepted by the validator and a deadlock in the simulator (the barrier waited for the
  // worker forever). Now the lists say OPT on every worker or on none.
  const Layout layout{1, 4, 8, 1};
  planner::Schedule s = planner::lower(generate("1f1b", layout));
  auto& actions = s.workers[2].actions;
  REQUIRE(actions.back().type == ActionType::kOptimizer);
  actions.pop_back();
  const auto violations = planner::validate(s);
  INFO(show(violations));
  CHECK(has(violations, planner::Rule::kIteration,
            "worker (0,2) lists no OPT but worker (0,0) does"));
}

TEST_CASE("a lowered schedule that lists no REDUCE_GRAD or OPT is charged for both") {
  // 1F1B dp 4 pp 4 m 8 on the four-stage profile: without them its all-reduce and optimizer were
  // never charged (467 ms became 404 ms). Now each worker all-reduces and steps after its last
  // action, as when they are listed.
  const Layout layout{4, 4, 8, 1};
  const auto profile =
      profiles::load_profile(std::string(RECYCLE_SOURCE_DIR) + "/tests/sim/data/four_stages.json");
  const planner::CostModel model = planner::CostModel::from_profile(profile, layout, "p");
  const planner::Schedule lowered = planner::lower(generate("1f1b", layout), model);
  planner::Schedule bare = lowered;
  for (auto& w : bare.workers) {
    std::erase_if(w.actions, [](const Action& a) { return planner::is_per_iteration(a.type); });
  }
  CHECK(planner::validate(bare).empty());
  const sim::SimRun with = sim::simulate(lowered, model, {});
  const sim::SimRun without = sim::simulate(bare, model, {});
  CHECK(sim::compute_metrics(without).iteration_time == sim::compute_metrics(with).iteration_time);
  // Stage 3's all-reduce is charged: a ring over its 4 peers, each on its own node (two workers
  // per node, ranks 3, 7, 11, 15): 2 x 3/4 x 1.25 GB / 25 GB/s + 2 x 3 x 20 us = 75.12 ms.
  std::int32_t stage_3 = 0;
  for (const sim::CollectiveRecord& c : without.timeline.collectives) {
    if (c.stage != 3) continue;
    ++stage_3;
    CHECK(c.end - c.start == 75'120'000);
  }
  CHECK(stage_3 == without.timeline.iterations);
}
