// The costs of a run's own actions (executor/run_costs.hpp) on a timeline made by hand.
#include <doctest/doctest.h>

#include "executor/run_costs.hpp"

using namespace recycle;
using namespace recycle::executor;
using planner::Action;
using planner::ActionType;

namespace {

TimedAction timed(ActionType type, std::int32_t v, std::int32_t iteration, std::int64_t ns,
                  bool dropped = false) {
  Action a;
  a.type = type;
  a.virtual_stage = v;
  return {.action = a,
          .iteration = iteration,
          .start_ns = 1000,
          .end_ns = 1000 + ns,
          .cpu_ns = -1,
          .dropped = dropped};
}

}  // namespace

TEST_CASE("run_costs: medians of the counted actions, B split as the timed costs split it") {
  // Timed before the run: both virtual stages F 10, I 20, W 30 ns; optimizer 5 ns a stage.
  const planner::Costs before{{{10, 20, 30}, {10, 20, 30}}, {5, 5}};
  RunResult run;
  WorkerRun& first = run.workers.emplace_back();
  first.timeline = {
      timed(ActionType::kForward, 0, 0, 1000),  // iteration 0: warm-up, not counted
      timed(ActionType::kForward, 0, 1, 100),        timed(ActionType::kForward, 0, 1, 300),
      timed(ActionType::kForward, 0, 2, 200),         // F(0): median of 100, 300, 200 = 200
      timed(ActionType::kForward, 0, 2, 9999, true),  // dropped: not counted
      timed(ActionType::kBackward, 0, 1, 60),         // only B ran on stage 0: 60 split 20:30
      timed(ActionType::kOptimizer, 0, 1, 7),
  };
  WorkerRun& second = run.workers.emplace_back();
  second.timeline = {
      timed(ActionType::kBackwardInput, 1, 1, 50), timed(ActionType::kBackwardInput, 1, 1, 70),
      timed(ActionType::kBackwardInput, 1, 2, 60),  // I(1): median 60; F and W not run
      timed(ActionType::kSendF, 1, 1, 400),         // transfers are not compute costs
  };
  const planner::Costs costs = run_costs(run, before);
  REQUIRE(costs.virtual_stages.size() == 2);
  CHECK(costs.virtual_stages[0] == planner::StageCost{200, 24, 36});
  CHECK(costs.virtual_stages[1] == planner::StageCost{10, 60, 30});
  CHECK(costs.optimizer == std::vector<Nanos>{7, 5});
}

TEST_CASE("run_costs: on shared cores, an action's processor time, not its wall time") {
  // Two F of stage 0 that each held the core half the time: 100 and 120 ns of processor time in
  // 200 and 240 ns of wall time; one more with no processor time recorded counts its wall time.
  const planner::Costs before{{{10, 20, 30}}, {5}};
  RunResult run;
  TimedAction a = timed(ActionType::kForward, 0, 1, 200);
  a.cpu_ns = 100;
  TimedAction b = timed(ActionType::kForward, 0, 1, 240);
  b.cpu_ns = 120;
  run.workers.emplace_back().timeline = {a, b, timed(ActionType::kForward, 0, 2, 110)};
  CHECK(a.work_ns() == 100);
  CHECK(run_costs(run, before).virtual_stages[0].forward == 110);  // median of 100, 120, 110
}
