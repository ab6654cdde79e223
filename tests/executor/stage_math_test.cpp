// The workload's gradients against central finite differences (in double, from the float forward
// pass), layer by layer: the input gradient of I and the weight and bias gradients of W.
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

}  // namespace

TEST_CASE("stage gradients match finite differences") {
  const StageParams params(kShape, 0, 7);
  const std::vector<float> input = synthetic_input(kShape, 7, 0, 0, 0);
  const std::vector<float> target = synthetic_target(kShape, 7, 0, 0, 0);

  StageParams with_grads = params;
  Chunk chunk;
  const std::vector<float> out = with_grads.forward(input, chunk);
  std::vector<float> output_gradient;
  StageParams::loss(out, target, output_gradient);
  const std::vector<float> input_gradient = with_grads.backward_input(output_gradient, chunk);
  with_grads.backward_weight(chunk);

  const float h = 1e-2F;
  SUBCASE("input gradient (I)") {
    for (std::size_t i = 0; i < input.size(); ++i) {
      std::vector<float> up = input, down = input;
      up[i] += h;
      down[i] -= h;
      const double numeric =
          (loss_of(params, up, target) - loss_of(params, down, target)) / (2 * h);
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
      CHECK(analytic[i] == doctest::Approx(numeric).epsilon(2e-2).scale(1e-3));
    }
  }
}

TEST_CASE("replicas of a stage start from the same weights, stages differ") {
  const StageParams a(kShape, 1, 3), b(kShape, 1, 3), c(kShape, 2, 3);
  CHECK(a.parameters() == b.parameters());
  CHECK(a.parameters() != c.parameters());
}
