// What a run of the executor is estimated to need before it starts (executor/footprint.hpp): the
// memory bound by hand, and the arithmetic limits of each backend against the sets
// tools/validate-gpu.sh runs.
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "executor/footprint.hpp"
#include "planner/generators.hpp"

using namespace recycle;
using namespace recycle::executor;

namespace {

planner::Schedule one_f_one_b(std::int32_t pp, std::int32_t microbatches) {
  planner::GeneratorOptions options;
  options.layout = {1, pp, microbatches, 1};
  return planner::generate_fault_free("1f1b", options);
}

}  // namespace

TEST_CASE("run_bytes: parameters three times, the micro-batches held and one I's temporaries") {
  // Width 5, 3 dense layers, 4 rows: 90 parameters; a held micro-batch keeps 3 x 3 x 4 x 5 = 180
  // floats and its two messages 2 x 20; an I's temporaries are two gradients of 20. 1F1B over 2
  // stages with 4 micro-batches: stage 0 holds 2 micro-batches at once, stage 1 one.
  const StageShape shape{5, 3, 4};
  const double stage0 = 3 * 90 + 2 * (180 + 40) + 40;
  const double stage1 = 3 * 90 + 1 * (180 + 40) + 40;
  CHECK(run_bytes(one_f_one_b(2, 4), shape) == static_cast<std::int64_t>(4 * (stage0 + stage1)));
}

TEST_CASE("a transformer I's temporaries: the probabilities' gradient, the heads' and two more") {
  StageShape shape{.width = 8, .layers = 1, .microbatch_size = 2};
  shape.block = Block::kTransformer;
  shape.sequence = 4;
  shape.heads = 2;
  // 2 samples x 2 heads x 4^2 + 8 tokens x (8 + 2 x 8).
  CHECK(transient_floats(shape) == 64 + 8 * 24);
}

TEST_CASE("the arithmetic limits: validate-gpu.sh's sets fit a GPU's and not the cpu's") {
  // Dense: 4 layers of width 4096 on 512 rows, 6 x 512 x 4096^2 x 4 = 2.06e11 per micro-batch's
  // F, I and W; 1F1B over 4 stages, 8 micro-batches, 10 iterations: 320 of them, 6.6e13.
  const StageShape dense{4096, 4, 512};
  const planner::Schedule pp4 = one_f_one_b(4, 8);
  CHECK_NOTHROW(require_run_fits(pp4, dense, 10, kMaxGpuFlops));
  CHECK_THROWS_AS(require_run_fits(pp4, dense, 10, kMaxCpuFlops), InputError);
  // One tensor-parallel rank's share (tp 8) of a GPT-3 175B layer: hidden 12288, 12 heads of 128,
  // an MLP of 6144, 2048 tokens: 6 x 2048 x (4 x 1536 x 12288 + 2 x 6144 x 12288) + 12 x 2048^2
  // x 1536 = 2.86e12 a timing; 11 timings (10 repetitions after a warm-up): 3.1e13.
  StageShape rank{.width = 12288, .layers = 1, .microbatch_size = 1};
  rank.block = Block::kTransformer;
  rank.sequence = 2048;
  rank.heads = 12;
  rank.head_dim = 128;
  rank.ffn = 6144;
  CHECK(chunk_flops(rank) == doctest::Approx(2.86045e12).epsilon(1e-5));
  CHECK_NOTHROW(require_measurement_fits(rank, 10, kMaxGpuFlops));
  CHECK_THROWS_AS(require_measurement_fits(rank, 10, kMaxCpuFlops), InputError);
}
