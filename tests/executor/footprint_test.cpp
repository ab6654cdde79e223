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

TEST_CASE("the memory limits: validate-gpu.sh's transformer set fits a GPU run and not the cpu's") {
  // 2 GPT blocks of width 1024, 16 heads, 4 sequences of 1024 tokens a micro-batch, on 1F1B over
  // 4 stages: each block keeps its 16 x 1024^2 attention probabilities of each of 4 sequences,
  // 256 MiB a block and micro-batch, held for up to 4 micro-batches on stage 0: 2 GiB there
  // alone, past 16 GiB over the 4 workers with the rest of each block's activations, and far
  // below the cuda backend's bound (each GPU's share is then checked against its free memory).
  StageShape t{1024, 2, 4};
  t.block = Block::kTransformer;
  t.sequence = 1024;
  t.heads = 16;
  const planner::Schedule pp4 = one_f_one_b(4, 8);
  CHECK(run_bytes(pp4, t) > kMaxRunBytes);
  CHECK(run_bytes(pp4, t) < kMaxGpuRunBytes / 10);
  CHECK_THROWS_AS(require_run_fits(pp4, t, 10, kMaxGpuFlops), InputError);
  CHECK_NOTHROW(require_run_fits(pp4, t, 10, kMaxGpuFlops, kMaxGpuRunBytes));
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

namespace {

/// Llama 3's layer (hidden h, 128-feature heads, 8192 tokens, one sequence) as one rank of tp
/// computes it.
StageShape llama3_rank(std::int32_t h, std::int32_t heads, std::int32_t kv_heads,
                       std::int32_t ffn) {
  StageShape s{.width = h, .layers = 1, .microbatch_size = 1};
  s.block = Block::kTransformer;
  s.style = transformer::kLlama;
  s.sequence = 8192;
  s.heads = heads;
  s.kv_heads = kv_heads;
  s.head_dim = 128;
  s.ffn = ffn;
  return s;
}

}  // namespace

TEST_CASE("validate-gpu.sh's Llama jobs: 8B needs tp 2 to fit, 70B's rank share fits") {
  // Llama 3 8B with tp 2: 16 heads, 4 key/value heads (Q K V 3072 wide), SwiGLU of 7168 (W1
  // 14336 wide). Bytes of one worker holding one micro-batch: 3 x 109,060,096 parameters, per
  // token 8 x 4096 + 2 x 3072 + 2048 + 2 x 14336 + 7168 + 2 = 76,802 kept floats and 16 x 8192^2
  // probabilities, two messages of 8192 x 4096, and I's temporaries 16 x 8192^2 + 8192 x (2048 +
  // 2 x 4096 + 7168): 3,313,541,120 floats, 12.34 GiB, under the 16 GiB limit.
  const StageShape eight = llama3_rank(4096, 16, 4, 7168);
  CHECK(run_bytes(one_f_one_b(1, 1), eight) == std::int64_t{4} * 3313541120);
  CHECK_NOTHROW(require_measurement_fits(eight, 10, kMaxGpuFlops));
  // FLOPs: 6 x 8192 x 4096 x (3072 + 2048 + 14336 + 7168) + 12 x 8192^2 x 2048 = 7.009e12.
  CHECK(chunk_flops(eight) == 7009386627072.0);
  // Its whole layer (tp 1) holds twice the probabilities: 23.19 GiB, refused.
  CHECK_THROWS_AS(require_measurement_fits(llama3_rank(4096, 32, 8, 14336), 10, kMaxGpuFlops),
                  InputError);
  // Llama 3 70B with tp 8: 8 query heads on 1 key/value head, SwiGLU of 3584: 6.08e12 FLOPs,
  // 8.99 GiB.
  const StageShape seventy = llama3_rank(8192, 8, 1, 3584);
  CHECK(chunk_flops(seventy) == 6081673691136.0);
  CHECK_NOTHROW(require_measurement_fits(seventy, 10, kMaxGpuFlops));
  CHECK_THROWS_AS(require_measurement_fits(seventy, 10, kMaxCpuFlops), InputError);
}

TEST_CASE("a measurement holding micro-batches in flight: its rounds, arithmetic and memory") {
  // At least `repetitions` of each operation, `in_flight` a round: ceil(repetitions / in_flight).
  CHECK(timed_rounds(10, 3) == 4);
  CHECK(timed_rounds(8, 8) == 1);
  CHECK(timed_rounds(20, 1) == 20);
  CHECK(timed_rounds(0, 0) == 1);
  // Width 5, 3 layers, 4 rows: 3 x 2 x 4 x 5^2 x 3 = 1800 operations per micro-batch's F, I and
  // W. 8 repetitions one at a time are 9 timings (a warm-up first), 16,200 operations; 8 held at
  // once are a warm-up round and one timed round of 8, 16 timings, 28,800.
  const StageShape shape{5, 3, 4};
  CHECK_NOTHROW(require_measurement_fits(shape, 8, 20'000, 1));
  CHECK_THROWS_WITH_AS(require_measurement_fits(shape, 8, 20'000, 8),
                       doctest::Contains("timing F, I and W 16 times"), InputError);
}
