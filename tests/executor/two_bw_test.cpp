// PipeDream-2BW on real arithmetic: the cpu backend keeps two weight versions, runs the lists that
// cross iterations (one more list drains the last iteration), and trains what PipeDream-2BW's
// rule W(t+1) = W(t) - lr grad f(W(t-1)) trains sequentially, which is not what synchronous SGD
// trains. The sequential rule itself is checked against a hand-unrolled run of the stage's
// arithmetic.
#include <doctest/doctest.h>

#include <vector>

#include "core/error.hpp"
#include "executor/runtime.hpp"
#include "executor/sequential.hpp"
#include "executor/stage_math.hpp"
#include "planner/generators.hpp"
#include "tests/executor/reference.hpp"

using namespace recycle;
using namespace recycle::executor;
using namespace recycle::executor::testing;

namespace {

/// The gradient-weighted step of one stage on one batch: a copy of `weights` with
/// `weights - lr x mean gradient`, the gradient taken at `at` on iteration `it`'s batch.
StageParams stepped(const StageParams& weights, StageParams at, const RunConfig& config,
                    std::int32_t it, std::int32_t microbatches) {
  for (std::int32_t mb = 0; mb < microbatches; ++mb) {
    Chunk chunk;
    const std::vector<float> out =
        at.forward(synthetic_input(config.shape, config.seed, it, 0, mb), chunk);
    std::vector<float> g;
    StageParams::loss(out, synthetic_target(config.shape, config.seed, it, 0, mb), g);
    (void)at.backward_input(g, chunk);
    at.backward_weight(chunk);
  }
  StageParams next = weights;
  next.gradients() = at.gradients();
  next.step(config.learning_rate, microbatches);
  return next;
}

}  // namespace

TEST_CASE(
    "2bw's sequential rule, unrolled by hand on one stage: W1 = W0 - g(W0), W2 = W1 - g(W0)") {
  const planner::Layout layout{1, 1, 2, 1};
  RunConfig config = small_config();
  config.iterations = 3;
  const StageParams w0(config.shape, 0, config.seed);
  const StageParams w1 = stepped(w0, w0, config, 0, layout.microbatches);
  const StageParams w2 = stepped(w1, w0, config, 1, layout.microbatches);
  const StageParams w3 = stepped(w2, w1, config, 2, layout.microbatches);
  const auto two_bw = train_sequentially(layout, config, 2);
  CHECK(max_relative_difference(two_bw.front(), w3.parameters()) < 1e-6);
  // Synchronous SGD steps on the newest weights instead: W2 = W1 - g(W1).
  const StageParams s2 = stepped(w1, w1, config, 1, layout.microbatches);
  const StageParams s3 = stepped(s2, s2, config, 2, layout.microbatches);
  CHECK(max_relative_difference(train_sequentially(layout, config, 1).front(), s3.parameters()) <
        1e-6);
  CHECK(max_relative_difference(w3.parameters(), s3.parameters()) > 1e-3);
}

TEST_CASE("2bw on the cpu backend trains what PipeDream-2BW's rule trains, not synchronous SGD") {
  // M = pp - 1 (the fewest 2bw takes: the backwards of a batch trail by at most one list) and
  // more; one pipeline and two.
  for (const planner::Layout layout :
       {planner::Layout{1, 4, 3, 1}, planner::Layout{2, 4, 8, 1}, planner::Layout{2, 3, 5, 1}}) {
    CAPTURE(layout.dp);
    CAPTURE(layout.pp);
    CAPTURE(layout.microbatches);
    planner::GeneratorOptions options;
    options.layout = layout;
    const planner::Schedule schedule = planner::generate_fault_free("2bw", options);
    REQUIRE(schedule.has_lags());
    RunConfig config = small_config();
    config.iterations = 4;
    const RunResult run = run_on_cpu(schedule, config);
    CHECK(run.microbatches_processed ==
          static_cast<std::int64_t>(config.iterations) * layout.dp * layout.microbatches);
    REQUIRE(run.iteration_end_ns.size() == static_cast<std::size_t>(config.iterations));
    const auto two_bw = train_sequentially(layout, config, 2);
    const auto synchronous = train_sequentially(layout, config, 1);
    for (const WorkerRun& w : run.workers) {
      CAPTURE(planner::to_string(w.id));
      REQUIRE(w.parameters.size() == 1);
      const auto& [v, params] = w.parameters.front();
      const auto s = static_cast<std::size_t>(v);
      CHECK(max_relative_difference(params, two_bw[s]) < 1e-5);
      CHECK(max_relative_difference(params, synchronous[s]) > 1e-3);
    }
  }
}

TEST_CASE("ReCycle on a 2bw base, re-routed around failed workers, trains what 2BW's rule trains") {
  // A peer steps with the failed worker's stage in the same list, so a re-routed micro-batch
  // computes on the weight version its own pipeline would have used.
  struct Case {
    planner::Layout layout;
    std::vector<planner::WorkerId> failed;
    std::int32_t memory_limit;
  };
  for (const Case& c : {Case{{2, 2, 4, 1}, {{1, 1}}, 2}, Case{{3, 4, 6, 1}, {{1, 1}, {2, 3}}, 8}}) {
    CAPTURE(c.layout.pp);
    planner::RecycleOptions options;
    options.layout = c.layout;
    options.base = "2bw";
    options.failed = c.failed;
    options.memory_limit = c.memory_limit;
    options.search_work = 0;
    const planner::RecyclePlan plan = planner::plan_recycle(options);
    REQUIRE(plan.feasible);
    REQUIRE(plan.schedule.weight_versions == 2);
    CHECK(!plan.schedule.routes.empty());
    RunConfig config = small_config();
    config.iterations = 4;
    const RunResult run = run_on_cpu(plan.schedule, config);
    CHECK(run.microbatches_processed ==
          static_cast<std::int64_t>(config.iterations) * c.layout.dp * c.layout.microbatches);
    const auto two_bw = train_sequentially(c.layout, config, 2);
    for (const WorkerRun& w : run.workers) {
      CAPTURE(planner::to_string(w.id));
      REQUIRE(w.parameters.size() == 1);
      const auto& [v, params] = w.parameters.front();
      CHECK(max_relative_difference(params, two_bw[static_cast<std::size_t>(v)]) < 1e-5);
    }
  }
}

TEST_CASE("2bw: a kill, which drops whole iterations, is refused before anything runs") {
  planner::GeneratorOptions options;
  options.layout = {2, 2, 2, 1};
  const planner::Schedule schedule = planner::generate_fault_free("2bw", options);
  RunConfig config = small_config();
  Kill kill;
  kill.worker = {1, 1};
  kill.iteration = 1;
  kill.then = recycle_plan(options.layout, {{1, 1}});
  config.kills.push_back(kill);
  CHECK_THROWS_AS((void)run_on_cpu(schedule, config), InputError);
}
