// The workload's gradients against central finite differences (in double, from the float forward
// pass), dense layers and transformer blocks: the input gradient of I and every parameter's
// gradient from W; the sizes the profile and the memory bound count, by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "executor/stage_math.hpp"

using namespace recycle::executor;

namespace {

const StageShape kShape{5, 3, 4};  // width 5, 3 layers, 4 rows

/// The last stage's loss for `input`, with `params` as given.
double loss_of(const StageParams& params, const std::vector<float>& input,
               const std::vector<float>& target) {
  Chunk chunk;
  const std::vector<float> out = params.forward(input, chunk);
  std::vector<float> gradient;
  return StageParams::loss(out, target, gradient);
}

/// A copy of `params` with parameter `i` moved by `delta` (through a step on a crafted gradient).
StageParams moved(const StageParams& params, std::size_t i, float delta) {
  StageParams copy = params;
  copy.gradients().assign(copy.parameters().size(), 0.0F);
  copy.gradients()[i] = -delta;
  copy.step(1.0, 1);
  return copy;
}

/// I's input gradient and W's parameter gradients of `shape`'s last stage against central
/// differences of the loss with step `h`.
void check_gradients(const StageShape& shape, float h) {
  const StageParams params(shape, 0, 7);
  const std::vector<float> input = synthetic_input(shape, 7, 0, 0, 0);
  const std::vector<float> target = synthetic_target(shape, 7, 0, 0, 0);

  StageParams with_grads = params;
  Chunk chunk;
  const std::vector<float> out = with_grads.forward(input, chunk);
  std::vector<float> output_gradient;
  StageParams::loss(out, target, output_gradient);
  const std::vector<float> input_gradient = with_grads.backward_input(output_gradient, chunk);
  with_grads.backward_weight(chunk);

  SUBCASE("input gradient (I)") {
    for (std::size_t i = 0; i < input.size(); ++i) {
      std::vector<float> up = input, down = input;
      up[i] += h;
      down[i] -= h;
      const double numeric =
          (loss_of(params, up, target) - loss_of(params, down, target)) / (2 * h);
      CAPTURE(i);
      CHECK(input_gradient[i] == doctest::Approx(numeric).epsilon(2e-2).scale(1e-3));
    }
  }
  SUBCASE("weight and bias gradients (W)") {
    const std::vector<float>& analytic = with_grads.gradients();
    REQUIRE(analytic.size() == params.parameters().size());
    for (std::size_t i = 0; i < analytic.size(); ++i) {
      const double numeric = (loss_of(moved(params, i, h), input, target) -
                              loss_of(moved(params, i, -h), input, target)) /
                             (2 * h);
      CAPTURE(i);
      CHECK(analytic[i] == doctest::Approx(numeric).epsilon(2e-2).scale(1e-3));
    }
  }
}

/// Two transformer blocks of width 4 with 2 heads, micro-batches of 2 sequences of 3 tokens.
StageShape transformer_shape() {
  StageShape shape{.width = 4, .layers = 2, .microbatch_size = 2};
  shape.block = Block::kTransformer;
  shape.sequence = 3;
  shape.heads = 2;
  return shape;
}

/// Floats a micro-batch's chunk holds after its F and I (what W reads), counted buffer by buffer.
std::size_t kept_after_f_and_i(const StageShape& shape) {
  const StageParams params(shape, 0, 1);
  Chunk chunk;
  const std::vector<float> out = params.forward(synthetic_input(shape, 1, 0, 0, 0), chunk);
  std::vector<float> gradient;
  StageParams::loss(out, synthetic_target(shape, 1, 0, 0, 0), gradient);
  static_cast<void>(params.backward_input(gradient, chunk));
  std::size_t kept = 0;
  for (const auto& t : chunk.saved) kept += t.size();
  for (const auto& t : chunk.grads) kept += t.size();
  return kept;
}

/// One tensor-parallel rank's share of a block (transformer_block.hpp): width 4 with 2 heads of
/// 3 features (Q, K and V 6 wide, not 4) and an MLP of 6 (not 16), so that every product whose
/// shape differs from a GPT layer's is exercised.
StageShape shard_shape() {
  StageShape shape = transformer_shape();
  shape.head_dim = 3;
  shape.ffn = 6;
  return shape;
}

}  // namespace

TEST_CASE("stage gradients match finite differences: dense layers") {
  check_gradients(kShape, 1e-2F);
}

TEST_CASE("stage gradients match finite differences: transformer blocks") {
  // Every parameter: Wqkv, Wo, W1, W2, their biases, both layer norms' gains and biases.
  check_gradients(transformer_shape(), 1e-2F);
}

TEST_CASE("stage gradients match finite differences: a tensor-parallel rank's block") {
  // A step of 3e-3, not 1e-2: the loss is curved enough along LN1's last bias here that the
  // central difference moves with the step (1.41e-3, 1.64e-3, 1.68e-3, 1.72e-3 at 1e-2, 5e-3,
  // 2.5e-3, 1.25e-3) towards W's 1.72e-3; the tolerance is the other tests'.
  check_gradients(shard_shape(), 3e-3F);
}

TEST_CASE("a tensor-parallel rank's block: sizes by hand") {
  const StageShape shape = shard_shape();
  // h = 4, a = 2 x 3 = 6, f = 6. Per layer: Wqkv 4 x 18 = 72 and its bias 18, Wo 6 x 4 = 24 and
  // its bias 4, W1 4 x 6 = 24 and its bias 6, W2 6 x 4 = 24 and its bias 4, two layer norms 16:
  // 192 floats; two layers.
  CHECK(parameter_floats(shape) == 384);
  CHECK(StageParams(shape, 0, 1).parameters().size() == 384);
  // Kept per token from F: x-hat, LN1, x-hat, LN2 (4 each), QKV 18, heads 6, u and GELU 6 each:
  // 52; from I: dy, dLN2, dy1, dLN1 (4 each), du 6, dQKV 18: 40; two reciprocal deviations.
  // 6 tokens x 94 + 2 samples x 2 heads x 3^2 = 600 per layer.
  CHECK(chunk_floats(shape) == 2 * 600);
  CHECK(kept_after_f_and_i(shape) == 2 * 600);
  // F, I and W: 3 x 2 x 6 tokens x (4 x 18 + 6 x 4 + 4 x 6 + 6 x 4) for the weight products, and
  // 3 x 2 x 2 products x 2 samples x 2 heads x 3 x 3 x 3 for attention; two layers.
  CHECK(chunk_flops(shape) == 2 * (3 * 2 * 6 * 144 + 3 * 2 * 2 * 2 * 2 * 27));
  CHECK(describe_layers(shape) ==
        "2 transformer blocks of width 4, 2 heads of 3 features, an MLP of 6, sequences of 3");
}

TEST_CASE("transformer blocks: sizes by hand, and a token sees no later token") {
  const StageShape shape = transformer_shape();
  // Per layer 12 h^2 + 13 h = 12 x 16 + 13 x 4 = 244 floats; two layers.
  CHECK(parameter_floats(shape) == 488);
  CHECK(StageParams(shape, 0, 1).parameters().size() == 488);
  // 6 tokens of 4: a micro-batch's activation is 24 floats.
  CHECK(synthetic_input(shape, 1, 0, 0, 0).size() == 24);
  // What a chunk keeps per layer: 27 x 6 tokens x 4 + 2 x 6 + 2 samples x 2 heads x 3^2 = 696.
  CHECK(chunk_floats(shape) == 2 * 696);
  CHECK(kept_after_f_and_i(shape) == 2 * 696);  // what the profile and the memory bound count
  const StageParams params(shape, 0, 1);
  Chunk chunk;
  std::vector<float> input = synthetic_input(shape, 1, 0, 0, 0);
  const std::vector<float> out = params.forward(input, chunk);
  // Changing sample 0's last token (row 2) changes nothing of its tokens 0 and 1 (rows 0, 1),
  // nor of sample 1 (rows 3-5): attention is causal and within a sample.
  for (std::size_t c = 0; c < 4; ++c) input[2 * 4 + c] += 0.5F;
  Chunk other;
  const std::vector<float> changed = params.forward(input, other);
  for (std::size_t i = 0; i < 24; ++i) {
    CAPTURE(i);
    if (i / 4 == 2) {
      CHECK(changed[i] != out[i]);
    } else {
      CHECK(changed[i] == out[i]);
    }
  }
}

TEST_CASE("dense layers: sizes by hand") {
  // Width 5, 3 layers, 4 rows: 3 x (25 + 5) parameters; a chunk keeps 3 x 3 x 4 x 5 floats.
  CHECK(parameter_floats(kShape) == 90);
  CHECK(chunk_floats(kShape) == 180);
  CHECK(chunk_flops(kShape) == 3 * 2 * 4 * 5 * 5 * 3);
}

TEST_CASE("replicas of a stage start from the same weights, stages differ") {
  const StageParams a(kShape, 1, 3), b(kShape, 1, 3), c(kShape, 2, 3);
  CHECK(a.parameters() == b.parameters());
  CHECK(a.parameters() != c.parameters());
}
