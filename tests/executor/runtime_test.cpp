// The runtime on real arithmetic: every schedule, fault-free or re-routed around failed workers,
// trains exactly what a plain sequential loop over the global batch trains (to fp32 rounding),
// processes each micro-batch once per iteration, and refuses a deadlocking schedule before it
// runs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "executor/run_schedule.hpp"
#include "executor/runtime.hpp"
#include "planner/generators.hpp"
#include "tests/executor/reference.hpp"

using namespace recycle;
using namespace recycle::executor;
using planner::Layout;
using namespace recycle::executor::testing;

namespace {

/// Checks every live worker's final parameters against the sequential reference.
void check_against_reference(const planner::Schedule& schedule, const RunConfig& config) {
  const RunResult run = run_on_cpu(schedule, config);
  const auto reference = sequential(schedule.layout, config);
  const Layout& l = schedule.layout;
  CHECK(run.microbatches_processed ==
        static_cast<std::int64_t>(config.iterations) * l.dp * l.microbatches);
  REQUIRE(run.workers.size() == schedule.workers.size());
  for (const WorkerRun& w : run.workers) {
    REQUIRE(w.parameters.size() == 1);
    const auto& [v, params] = w.parameters.front();
    CHECK(v == w.id.stage);
    const double diff = max_relative_difference(params, reference[static_cast<std::size_t>(v)]);
    INFO("worker " << planner::to_string(w.id) << ": max relative difference " << diff);
    CHECK(diff < 1e-5);
  }
  REQUIRE(run.loss.size() == static_cast<std::size_t>(config.iterations));
  REQUIRE(run.iteration_end_ns.size() == static_cast<std::size_t>(config.iterations));
  CHECK(std::is_sorted(run.iteration_end_ns.begin(), run.iteration_end_ns.end()));
}

}  // namespace

TEST_CASE("fault-free schedules train what the sequential loop trains") {
  for (const char* name : {"gpipe", "1f1b", "zb-h1"}) {
    CAPTURE(name);
    planner::GeneratorOptions options;
    options.layout = {2, 3, 4, 1};
    check_against_reference(planner::generate_fault_free(name, options), small_config());
  }
}

TEST_CASE("several chunks a worker, in a loop and in a V, train what the sequential loop trains") {
  // Each virtual stage is a stage of the workload on whichever worker the placement puts it.
  for (const char* name : {"interleaved", "zb-v", "dualpipe-v"}) {
    CAPTURE(name);
    planner::GeneratorOptions options;
    options.layout = planner::layout_for(name, {2, 2, 4, 2});
    const planner::Schedule schedule = planner::generate_fault_free(name, options);
    const RunConfig config = small_config();
    const RunResult run = run_on_cpu(schedule, config);
    const auto reference = sequential(schedule.layout, config);
    CHECK(run.microbatches_processed == static_cast<std::int64_t>(config.iterations) * 2 * 4);
    for (const WorkerRun& w : run.workers) {
      CAPTURE(planner::to_string(w.id));
      REQUIRE(w.parameters.size() == 2);
      for (const auto& [v, params] : w.parameters) {
        CHECK(schedule.layout.stage_of(v) == w.id.stage);
        CHECK(max_relative_difference(params, reference[static_cast<std::size_t>(v)]) < 1e-5);
      }
    }
  }
}

TEST_CASE("ReCycle's re-routed plans train what the fault-free job trains") {
  for (const std::vector<planner::WorkerId>& failed :
       std::vector<std::vector<planner::WorkerId>>{{{1, 0}}, {{0, 1}}, {{0, 2}, {2, 0}}}) {
    const planner::Schedule plan = recycle_plan({3, 3, 3, 1}, failed);
    CHECK(!plan.routes.empty());
    CAPTURE(plan.workers.size());
    check_against_reference(plan, small_config());
  }
}

TEST_CASE("the SEND pairs a backend connects before a run: neighbours, and the re-routed ones") {
  using planner::WorkerId;
  using Pairs = std::set<std::pair<WorkerId, WorkerId>>;
  const auto pairs_of = [](const planner::Schedule& s) {
    const auto list = detail::send_pairs(planner::lower(s));
    const Pairs set(list.begin(), list.end());
    CHECK(set.size() == list.size());  // each pair once
    return set;
  };
  // 1F1B over 3 stages: activations down the pipeline, gradients back up.
  planner::GeneratorOptions options;
  options.layout = {1, 3, 4, 1};
  CHECK(pairs_of(planner::generate_fault_free("1f1b", options)) ==
        Pairs{{{0, 0}, {0, 1}}, {{0, 1}, {0, 2}}, {{0, 1}, {0, 0}}, {{0, 2}, {0, 1}}});
  // ReCycle with worker 1:0 (pipeline 1's stage 0) failed over DP 2 x PP 2: its micro-batches
  // start on 0:0, which sends them on to both pipelines' stage 1 and gets both's gradients back.
  CHECK(pairs_of(recycle_plan({2, 2, 4, 1}, {{1, 0}})) ==
        Pairs{{{0, 0}, {0, 1}}, {{0, 1}, {0, 0}}, {{0, 0}, {1, 1}}, {{1, 1}, {0, 0}}});
}

TEST_CASE("transformer blocks: ZB-H1 and a ReCycle plan train what the sequential loop trains") {
  // Two blocks of width 16 with 4 heads per stage, micro-batches of 2 sequences of 4 tokens.
  RunConfig config = small_config();
  config.shape.block = Block::kTransformer;
  config.shape.microbatch_size = 2;
  config.shape.sequence = 4;
  config.shape.heads = 4;
  config.learning_rate = 0.05;
  planner::GeneratorOptions options;
  options.layout = {2, 3, 4, 1};
  check_against_reference(planner::generate_fault_free("zb-h1", options), config);
  check_against_reference(recycle_plan({2, 3, 4, 1}, {{1, 1}}), config);
}

TEST_CASE("a deadlocking schedule is refused before anything runs") {
  // Stage 1 waits for micro-batch 1 first; stage 0 sends it only after micro-batch 0's backward,
  // which needs stage 1's backward of micro-batch 0.
  using planner::Action;
  using planner::ActionType;
  planner::Schedule s;
  s.generator = "file";
  s.layout = {1, 2, 2, 1};
  s.workers = {{{0, 0},
                {{ActionType::kForward, 0, 0, 0},
                 {ActionType::kBackward, 0, 0, 0},
                 {ActionType::kForward, 0, 1, 0},
                 {ActionType::kBackward, 0, 1, 0}}},
               {{0, 1},
                {{ActionType::kForward, 1, 1, 0},
                 {ActionType::kBackward, 1, 1, 0},
                 {ActionType::kForward, 1, 0, 0},
                 {ActionType::kBackward, 1, 0, 0}}}};
  CHECK_THROWS_AS(static_cast<void>(run_on_cpu(s, small_config())), InputError);
}

TEST_CASE("iterations below one are refused") {
  planner::GeneratorOptions options;
  options.layout = {1, 2, 2, 1};
  RunConfig config = small_config();
  config.iterations = 0;
  CHECK_THROWS_AS(
      static_cast<void>(run_on_cpu(planner::generate_fault_free("1f1b", options), config)),
      InputError);
}
