// Failure injection: a worker killed part-way through an iteration is found by its missed
// heartbeats, the iterations it interrupted are dropped and redone by the survivors on ReCycle's
// plan for the new failure set, every micro-batch is counted once, and the weights come out as
// the sequential loop over the global batch makes them (the failure changes nothing the model
// sees).
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "core/error.hpp"
#include "executor/runtime.hpp"
#include "planner/generators.hpp"
#include "tests/executor/reference.hpp"

using namespace recycle;
using namespace recycle::executor;
using namespace recycle::executor::testing;
using planner::Layout;
using planner::WorkerId;

namespace {

RunConfig kill_config() {
  RunConfig config = small_config();
  config.iterations = 4;
  // Long enough that a loaded machine (sanitizers, parallel tests) never misses a live beat.
  config.heartbeat.period = std::chrono::milliseconds(25);
  config.heartbeat.missed = 4;
  return config;
}

}  // namespace

TEST_CASE("a killed worker is detected by its heartbeats and the survivors redo its iteration") {
  const Layout layout{2, 3, 4, 1};
  planner::GeneratorOptions options;
  options.layout = layout;
  RunConfig config = kill_config();
  config.kills.push_back({{1, 1}, 1, 0.5, recycle_plan(layout, {{1, 1}})});
  const RunResult run = run_on_cpu(planner::generate_fault_free("1f1b", options), config);

  REQUIRE(run.recoveries.size() == 1);
  const Recovery& r = run.recoveries.front();
  CHECK(r.killed == WorkerId{1, 1});
  // Iteration 0 was finished by every worker before the kill; iteration 1 never was.
  CHECK(r.resumed_at == 1);
  CHECK(r.dropped_iterations >= 1);
  // Half of (1,1)'s lowered actions ran, among them forwards of its own micro-batches, whose
  // losses the last stage computed: those are dropped and recounted, never counted twice.
  CHECK(r.dropped_microbatches > 0);
  // The monitor reports a worker only after `missed` periods without a beat.
  CHECK(r.detect_ns - r.last_beat_ns >
        config.heartbeat.missed *
            std::chrono::duration_cast<std::chrono::nanoseconds>(config.heartbeat.period).count());
  CHECK(r.detect_ns > r.kill_ns);
  CHECK(r.resume_ns >= r.detect_ns);
  CHECK(run.segment_start == std::vector<std::int32_t>{0, 1});

  const auto killed = std::find_if(run.workers.begin(), run.workers.end(), [](const WorkerRun& w) {
    return w.id == WorkerId{1, 1};
  });
  REQUIRE(killed != run.workers.end());
  CHECK(killed->killed);
  CHECK(std::all_of(killed->timeline.begin(), killed->timeline.end(),
                    [](const TimedAction& t) { return t.iteration <= 1; }));
  // Every action of the dropped iteration is marked, and every survivor ran iteration 1 again.
  for (const WorkerRun& w : run.workers) {
    CAPTURE(planner::to_string(w.id));
    for (const TimedAction& t : w.timeline)
      CHECK(t.dropped == (t.iteration >= 1 && t.start_ns < r.resume_ns));
  }
  check_trained_like_sequential(run, layout, config);
}

TEST_CASE("two kills, one before the first action, the next on the re-routed plan") {
  const Layout layout{3, 2, 3, 1};
  RunConfig config = kill_config();
  config.kills.push_back({{0, 1}, 0, 0.0, recycle_plan(layout, {{0, 1}})});
  config.kills.push_back({{2, 0}, 2, 0.3, recycle_plan(layout, {{0, 1}, {2, 0}})});
  const RunResult run = run_on_cpu(recycle_plan(layout, {}), config);
  REQUIRE(run.recoveries.size() == 2);
  CHECK(run.recoveries[0].resumed_at == 0);
  // (0,1) died before its first action; only the other pipelines' last stages computed losses.
  CHECK(run.workers[1].id == WorkerId{0, 1});
  CHECK(run.workers[1].timeline.empty());
  CHECK(run.recoveries[0].dropped_microbatches <= 2 * layout.microbatches);
  CHECK(run.recoveries[1].resumed_at == 2);
  CHECK(run.segment_start == std::vector<std::int32_t>{0, 0, 2});
  check_trained_like_sequential(run, layout, config);
}

TEST_CASE("a kill after the last action any survivor waits on is found, and its iteration redone") {
  // ReCycle's fault-free plan staggers the optimizer (no global barrier): with 0.99 of its
  // actions done in the last iteration (fewer than 100 actions), (1,1) stops before its last one,
  // its own OPT, which no survivor waits on. The survivors finish every iteration; the kill must
  // still be found by the monitor, and the iteration (1,1) left unfinished dropped and redone on
  // the plan around it.
  const Layout layout{2, 2, 4, 1};
  RunConfig config = kill_config();
  config.iterations = 3;
  config.kills.push_back({{1, 1}, 2, 0.99, recycle_plan(layout, {{1, 1}})});
  const RunResult run = run_on_cpu(recycle_plan(layout, {}), config);
  REQUIRE(run.recoveries.size() == 1);
  const Recovery& r = run.recoveries.front();
  CHECK(r.killed == WorkerId{1, 1});
  CHECK(r.resumed_at == 2);  // iterations 0 and 1 were finished by every worker
  CHECK(r.dropped_iterations == 1);
  // Every micro-batch of the last iteration had reached the loss before the kill: 2 x 4 recounted.
  CHECK(r.dropped_microbatches == layout.dp * layout.microbatches);
  CHECK(r.detect_ns > r.kill_ns);
  CHECK(run.segment_start == std::vector<std::int32_t>{0, 2});
  check_trained_like_sequential(run, layout, config);
}

TEST_CASE("kills that do not fit the run are refused before it starts") {
  const Layout layout{2, 2, 2, 1};
  planner::GeneratorOptions options;
  options.layout = layout;
  const planner::Schedule schedule = planner::generate_fault_free("1f1b", options);
  const planner::Schedule after = recycle_plan(layout, {{1, 0}});
  auto refused = [&](Kill kill) {
    RunConfig config = kill_config();
    config.kills.push_back(std::move(kill));
    CHECK_THROWS_AS(static_cast<void>(run_on_cpu(schedule, config)), InputError);
  };
  refused({{1, 0}, 4, 0.5, after});     // iteration past --iterations (4)
  refused({{1, 0}, 1, 1.0, after});     // the fraction must be below 1
  refused({{1, 0}, 1, -0.1, after});    // and not negative
  refused({{0, 0}, 1, 0.5, after});     // the plan after it is for another failure set
  refused({{1, 0}, 1, 0.5, schedule});  // the plan after it still runs the killed worker

  // A worker that already failed cannot be killed.
  RunConfig config = kill_config();
  config.kills.push_back({{1, 0}, 1, 0.5, after});
  config.kills.push_back({{1, 0}, 2, 0.5, after});
  CHECK_THROWS_AS(static_cast<void>(run_on_cpu(schedule, config)), InputError);
}
