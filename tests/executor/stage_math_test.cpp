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

}  // namespace

TEST_CASE("stage gradients match finite differences: dense layers") {
  check_gradients(kShape, 1e-2F);
}

TEST_CASE("stage gradients match finite differences: transformer blocks") {
  // Every parameter: Wqkv, Wo, W1, W2, their biases, both layer norms' gains and biases.
  check_gradients(transformer_shape(), 1e-2F);
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
  StageParams params(shape, 0, 1);
  Chunk chunk;
  std::vector<float> input = synthetic_input(shape, 1, 0, 0, 0);
  const std::vector<float> out = params.forward(input, chunk);
  std::vector<float> gradient;
  StageParams::loss(out, synthetic_target(shape, 1, 0, 0, 0), gradient);
  static_cast<void>(params.backward_input(gradient, chunk));
  std::size_t kept = 0;
  for (const auto& t : chunk.saved) kept += t.size();
  for (const auto& t : chunk.grads) kept += t.size();
  CHECK(kept == chunk_floats(shape));  // what the profile and the memory bound count
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
