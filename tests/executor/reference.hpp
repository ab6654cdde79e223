// What the executor's tests compare against: the sequential loop a pipeline schedule must train
// the same weights as, a small configuration that runs in milliseconds, and ReCycle's plan for a
// set of failed workers.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "executor/runtime.hpp"
#include "executor/sequential.hpp"
#include "executor/stage_math.hpp"
#include "planner/language/schedule.hpp"
#include "planner/recycle_planner.hpp"

namespace recycle::executor::testing {

/// The synchronous reference (executor/sequential.hpp): per stage, final parameters.
inline std::vector<std::vector<float>> sequential(const planner::Layout& layout,
                                                  const RunConfig& config) {
  return train_sequentially(layout, config);
}

/// A run's survivors' final weights against the sequential loop (within 1e-5), a killed
/// worker's none, and each micro-batch of each iteration counted once.
inline void check_trained_like_sequential(const RunResult& run, const planner::Layout& layout,
                                          const RunConfig& config) {
  CHECK(run.microbatches_processed ==
        static_cast<std::int64_t>(config.iterations) * layout.dp * layout.microbatches);
  const auto reference = sequential(layout, config);
  for (const WorkerRun& w : run.workers) {
    CAPTURE(planner::to_string(w.id));
    if (w.killed) {
      CHECK(w.parameters.empty());
      continue;
    }
    REQUIRE(w.parameters.size() == 1);
    const auto& [v, params] = w.parameters.front();
    CHECK(max_relative_difference(params, reference[static_cast<std::size_t>(v)]) < 1e-5);
  }
}

/// ReCycle's plan (its list schedule, no search) for `failed` on `layout`, which must be feasible.
inline planner::Schedule recycle_plan(const planner::Layout& layout,
                                      std::vector<planner::WorkerId> failed) {
  planner::RecycleOptions options;
  options.layout = layout;
  options.failed = std::move(failed);
  options.search_work = 0;
  const planner::RecyclePlan plan = planner::plan_recycle(options);
  REQUIRE(plan.feasible);
  return plan.schedule;
}

inline RunConfig small_config() {
  RunConfig config;
  config.shape = {16, 2, 4};
  config.iterations = 3;
  config.learning_rate = 0.5;
  return config;
}

}  // namespace recycle::executor::testing
