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
#include "executor/stage_math.hpp"
#include "planner/language/schedule.hpp"
#include "planner/recycle_planner.hpp"

namespace recycle::executor::testing {

/// The reference: every micro-batch of every pipeline through every stage in turn, gradients
/// summed, SGD on their mean; no pipeline, no threads. Per stage: final parameters.
inline std::vector<std::vector<float>> sequential(const planner::Layout& layout,
                                                  const RunConfig& config) {
  std::vector<StageParams> stages;
  for (std::int32_t s = 0; s < layout.pp; ++s) stages.emplace_back(config.shape, s, config.seed);
  for (std::int32_t it = 0; it < config.iterations; ++it) {
    for (std::int32_t owner = 0; owner < layout.dp; ++owner) {
      for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
        std::vector<Chunk> chunks(static_cast<std::size_t>(layout.pp));
        std::vector<float> x = synthetic_input(config.shape, config.seed, it, owner, mb);
        for (std::int32_t s = 0; s < layout.pp; ++s)
          x = stages[static_cast<std::size_t>(s)].forward(x, chunks[static_cast<std::size_t>(s)]);
        std::vector<float> g;
        StageParams::loss(x, synthetic_target(config.shape, config.seed, it, owner, mb), g);
        for (std::int32_t s = layout.pp - 1; s >= 0; --s) {
          const auto si = static_cast<std::size_t>(s);
          g = stages[si].backward_input(g, chunks[si]);
          stages[si].backward_weight(chunks[si]);
        }
      }
    }
    for (StageParams& p : stages) p.step(config.learning_rate, layout.dp * layout.microbatches);
  }
  std::vector<std::vector<float>> out;
  for (const StageParams& p : stages) out.push_back(p.parameters());
  return out;
}

inline double max_relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double scale = std::max(1e-3, std::abs(static_cast<double>(b[i])));
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]) / scale);
  }
  return worst;
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
