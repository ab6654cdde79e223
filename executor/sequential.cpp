#include "executor/sequential.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "executor/stage_math.hpp"

namespace recycle::executor {

std::vector<std::vector<float>> train_sequentially(const planner::Layout& layout,
                                                   const RunConfig& config,
                                                   std::int32_t weight_versions) {
  RECYCLE_ASSERT(weight_versions == 1 || weight_versions == 2, "one or two weight versions");
  // newest: version t (what iteration t steps); older: version t - 1 (what 2BW computes on).
  std::vector<StageParams> newest;
  const std::int32_t stages = layout.virtual_stages();
  for (std::int32_t v = 0; v < stages; ++v) newest.emplace_back(config.shape, v, config.seed);
  std::vector<StageParams> older = newest;
  for (std::int32_t it = 0; it < config.iterations; ++it) {
    std::vector<StageParams> reading = weight_versions == 1 ? newest : older;
    for (std::int32_t owner = 0; owner < layout.dp; ++owner) {
      for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
        std::vector<Chunk> chunks(static_cast<std::size_t>(stages));
        std::vector<float> x = synthetic_input(config.shape, config.seed, it, owner, mb);
        for (std::int32_t s = 0; s < stages; ++s)
          x = reading[static_cast<std::size_t>(s)].forward(x, chunks[static_cast<std::size_t>(s)]);
        std::vector<float> g;
        StageParams::loss(x, synthetic_target(config.shape, config.seed, it, owner, mb), g);
        for (std::int32_t s = stages - 1; s >= 0; --s) {
          const auto si = static_cast<std::size_t>(s);
          g = reading[si].backward_input(g, chunks[si]);
          reading[si].backward_weight(chunks[si]);
        }
      }
    }
    std::vector<StageParams> next = newest;
    for (std::size_t s = 0; s < next.size(); ++s) {
      next[s].gradients() = reading[s].gradients();
      next[s].step(config.learning_rate, std::int64_t{layout.dp} * layout.microbatches);
    }
    older = std::move(newest);
    newest = std::move(next);
  }
  std::vector<std::vector<float>> out;
  for (const StageParams& p : newest) out.push_back(p.parameters());
  return out;
}

double max_relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  RECYCLE_ASSERT(a.size() == b.size(), "weights of different sizes");
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double scale = std::max(1e-3, std::abs(static_cast<double>(b[i])));
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]) / scale);
  }
  return worst;
}

}  // namespace recycle::executor
