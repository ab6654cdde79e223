// The workload's gradients against central finite differences, extrapolated (in double, from the
// float forward pass), dense layers and transformer blocks: the input gradient of I and every
// parameter's gradient from W; the sizes the profile and the memory bound count, by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "executor/cpu_ops.hpp"
#include "executor/stage_math.hpp"
#include "executor/transformer_layers.hpp"
#include "profiles/flops.hpp"
#include "profiles/shipped.hpp"

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

/// The derivative of `loss` (of a step) by Richardson's extrapolation of central differences at
/// steps h and h/2: (4 D(h/2) - D(h)) / 3, whose error is O(h^4), not D's O(h^2). That takes a
/// step large enough that the float forward pass's rounding, divided by the step, stays well
/// below the tolerance whichever kernels OpenBLAS picks. With D alone at 3e-3 (the step the
/// tensor-parallel block needed for its curvature, below) one parameter there read 6.9e-5 against
/// W's 3.2e-5 under OpenBLAS's generic kernels (3.2e-5 under its AVX2 ones): rounding alone, 1.74
/// times the tolerance. At h = 2e-2 the largest error of every test below, under the generic and
/// the AVX2 kernels alike, is 0.72 of the tolerance.
template <typename Loss>
double derivative(const Loss& loss, float h) {
  const auto central = [&](float step) { return (loss(step) - loss(-step)) / (2.0 * step); };
  return (4 * central(h / 2) - central(h)) / 3;
}

/// I's input gradient and W's parameter gradients of `shape`'s last stage against the extrapolated
/// central differences of the loss, step `h` (derivative above).
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
      const double numeric = derivative(
          [&](float step) {
            std::vector<float> moved_input = input;
            moved_input[i] += step;
            return loss_of(params, moved_input, target);
          },
          h);
      CAPTURE(i);
      CHECK(input_gradient[i] == doctest::Approx(numeric).epsilon(2e-2).scale(1e-3));
    }
  }
  SUBCASE("weight and bias gradients (W)") {
    const std::vector<float>& analytic = with_grads.gradients();
    REQUIRE(analytic.size() == params.parameters().size());
    for (std::size_t i = 0; i < analytic.size(); ++i) {
      const double numeric =
          derivative([&](float step) { return loss_of(moved(params, i, step), input, target); }, h);
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

/// A block's sizes worked by hand: parameters, the floats a chunk keeps, F + I + W FLOPs.
struct HandSizes {
  std::size_t parameters = 0;
  std::size_t kept = 0;
  double flops = 0;
  std::string description;
};

/// The stage's sizes against `hand`: parameters as counted and as allocated, the kept floats as
/// footprint.hpp counts them and buffer by buffer, the FLOPs and the description.
void check_sizes(const StageShape& shape, const HandSizes& hand) {
  CHECK(parameter_floats(shape) == hand.parameters);
  CHECK(StageParams(shape, 0, 1).parameters().size() == hand.parameters);
  CHECK(chunk_floats(shape) == hand.kept);
  CHECK(kept_after_f_and_i(shape) == hand.kept);
  CHECK(chunk_flops(shape) == hand.flops);
  CHECK(describe_layers(shape) == hand.description);
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

/// A Llama-style block (transformer_block.hpp): width 4, 4 query heads of 2 features sharing 2
/// key/value heads (grouped-query attention, groups of 2), SwiGLU of 6, RMSNorm, rotary
/// positions, no biases; two layers, 2 sequences of 3 tokens.
StageShape llama_shape() {
  StageShape shape = transformer_shape();
  shape.heads = 4;
  shape.head_dim = 2;
  shape.kv_heads = 2;
  shape.ffn = 6;
  shape.style = transformer::kLlama;
  return shape;
}

}  // namespace

TEST_CASE("stage gradients match finite differences: dense layers") {
  check_gradients(kShape, 2e-2F);
}

TEST_CASE("stage gradients match finite differences: transformer blocks") {
  // Every parameter: Wqkv, Wo, W1, W2, their biases, both layer norms' gains and biases.
  check_gradients(transformer_shape(), 2e-2F);
}

TEST_CASE("stage gradients match finite differences: a tensor-parallel rank's block") {
  // The loss is curved along LN1's last bias here: the central difference moves with the step
  // (1.41e-3, 1.64e-3, 1.68e-3, 1.72e-3 at 1e-2, 5e-3, 2.5e-3, 1.25e-3) towards W's 1.72e-3;
  // the extrapolation (derivative) cancels that term: (4 x 1.64e-3 - 1.41e-3) / 3 = 1.717e-3.
  check_gradients(shard_shape(), 2e-2F);
}

TEST_CASE("stage gradients match finite differences: a Llama-style block") {
  // Every parameter: Wqkv (Q of 4 heads, K and V of 2), Wo, W1 (gate and up), W2 and both
  // RMSNorms' gains; the input gradient through the rotation and the shared key/value heads.
  check_gradients(llama_shape(), 2e-2F);
}

TEST_CASE("stage gradients match finite differences: each Llama feature on its own") {
  // One feature at a time over the GPT block, so that a failure names the feature.
  for (const transformer::Style style :
       {transformer::Style{.gated_mlp = true}, transformer::Style{.bias = false},
        transformer::Style{.rms_norm = true}, transformer::Style{.rotary = true}}) {
    StageShape shape = transformer_shape();
    shape.style = style;
    CAPTURE(describe_layers(shape));
    check_gradients(shape, 2e-2F);
  }
  StageShape grouped = transformer_shape();
  grouped.kv_heads = 1;
  CAPTURE(describe_layers(grouped));
  check_gradients(grouped, 2e-2F);
}

TEST_CASE("grouped-query attention is multi-head attention with each key/value head repeated") {
  // The Llama-style block's F against a block with as many key/value heads as query heads whose
  // K and V columns for query head j are the grouped block's for key/value head j / 2: the same
  // output, token for token (the same products, summed in the same order).
  const StageShape grouped = llama_shape();
  StageShape full = grouped;
  full.kv_heads = grouped.heads;
  const transformer::Dims g = transformer_dims(grouped), m = transformer_dims(full);
  const transformer::Offsets og(g), om(m);
  const StageParams source(grouped, 0, 5);
  const std::vector<float>& pg = source.parameters();
  std::vector<float> pm(static_cast<std::size_t>(full.layers) * om.end);
  const auto copy = [](const float* from, std::size_t n, float* to) {
    std::copy(from, from + n, to);
  };
  const auto h = static_cast<std::size_t>(g.width), d = static_cast<std::size_t>(g.head_dim);
  const auto a = static_cast<std::size_t>(g.attention()), kv = static_cast<std::size_t>(g.kv());
  for (std::size_t l = 0; l < static_cast<std::size_t>(grouped.layers); ++l) {
    const float* from = pg.data() + l * og.end;
    float* to = pm.data() + l * om.end;
    copy(from + og.g1, h, to + om.g1);
    copy(from + og.wo, og.g2 - og.wo, to + om.wo);   // Wo
    copy(from + og.g2, og.end - og.g2, to + om.g2);  // g2, W1, W2
    const auto qkv_g = static_cast<std::size_t>(g.qkv()), qkv_m = static_cast<std::size_t>(m.qkv());
    for (std::size_t row = 0; row < h; ++row) {
      const float* in = from + og.wqkv + row * qkv_g;
      float* out = to + om.wqkv + row * qkv_m;
      copy(in, a, out);  // Q
      for (std::size_t j = 0; j < static_cast<std::size_t>(g.heads); ++j) {
        const std::size_t c = j / static_cast<std::size_t>(g.group());
        copy(in + a + c * d, d, out + a + j * d);           // K
        copy(in + a + kv + c * d, d, out + a + a + j * d);  // V
      }
    }
  }
  CpuOps ops;
  const std::vector<float> input = synthetic_input(grouped, 5, 0, 0, 0);
  std::vector<std::vector<float>> saved_g, saved_m;
  const std::vector<float> out_g =
      TransformerLayers<CpuOps>(ops, grouped).forward(pg.data(), input, saved_g);
  const std::vector<float> out_m =
      TransformerLayers<CpuOps>(ops, full).forward(pm.data(), input, saved_m);
  REQUIRE(out_g.size() == out_m.size());
  for (std::size_t i = 0; i < out_g.size(); ++i) {
    CAPTURE(i);
    CHECK(out_g[i] == doctest::Approx(out_m[i]).epsilon(1e-6));
  }
}

TEST_CASE("a Llama-style block: sizes by hand") {
  const StageShape shape = llama_shape();
  // h = 4, a = 4 x 2 = 8, kv = 2 x 2 = 4 (Q K V 16 wide), f = 6 (W1 12 wide). Per layer: g1 4,
  // Wqkv 4 x 16 = 64, Wo 8 x 4 = 32, g2 4, W1 4 x 12 = 48, W2 6 x 4 = 24: 176 floats; two layers.
  // Kept per token from F: x-hat, N1, x-hat, N2 (4 each), QKV 16, heads 8, u 12, SwiGLU 6: 58;
  // from I: dy, dN2, dy1, dN1 (4 each), du 12, dQKV 16: 44; two reciprocal deviations.
  // 6 tokens x 104 + 2 samples x 4 heads x 3^2 = 696 per layer.
  // F, I and W: 3 x 2 x 6 tokens x (4 x 16 + 8 x 4 + 4 x 12 + 6 x 4) for the weight products,
  // 3 x 2 x 2 products x 2 samples x 4 heads x 3 x 3 x 2 for attention; two layers.
  check_sizes(shape, {.parameters = 2 * 176,
                      .kept = 2 * 696,
                      .flops = 2 * (3 * 2 * 6 * 168 + 3 * 2 * 2 * 2 * 4 * 18),
                      .description = "2 transformer blocks of width 4, 4 heads of 2 features (2 "
                                     "key/value heads), an MLP of 6, sequences of 3, Llama-style "
                                     "(RMSNorm, SwiGLU, rotary, no biases)"});
  // What I holds besides: the probabilities' gradient 72, d(heads) 6 x 8, the gradients in and
  // out 2 x 6 x 4 and the SwiGLU output's gradient 6 x 6.
  CHECK(transient_floats(shape) == 72 + 48 + 48 + 36);
}

TEST_CASE("a block's parameters and FLOPs as profiles/ counts them, for the shipped models") {
  // Two definitions written apart: the executor's block (transformer_block.cpp) and the model
  // spec's layer (profiles/model_spec.cpp, profiles/flops.cpp). A block of one sample of the
  // model's sequence has the layer's parameters and 3 x its forward FLOPs (F, I and W).
  for (const auto& shipped : recycle::profiles::shipped_models()) {
    const std::string name(shipped.name);
    CAPTURE(name);
    const recycle::profiles::ModelSpec model = recycle::profiles::shipped_model(name, "model");
    StageShape shape;
    shape.block = Block::kTransformer;
    shape.layers = 1;
    shape.microbatch_size = 1;
    shape.width = static_cast<std::int32_t>(model.hidden);
    shape.sequence = static_cast<std::int32_t>(model.sequence_length);
    shape.heads = static_cast<std::int32_t>(model.heads);
    shape.kv_heads = static_cast<std::int32_t>(model.kv_heads);
    shape.head_dim = static_cast<std::int32_t>(model.head_dim);
    shape.ffn = static_cast<std::int32_t>(model.ffn_hidden);
    shape.style = {.gated_mlp = model.gated_mlp,
                   .bias = model.bias,
                   .rms_norm = model.norm == recycle::profiles::Norm::kRmsNorm,
                   .rotary = !model.learned_positions};
    CHECK(static_cast<std::int64_t>(parameter_floats(shape)) == model.layer_parameters());
    CHECK(chunk_flops(shape) ==
          3.0 * static_cast<double>(recycle::profiles::layer_forward_flops(model)));
  }
}

TEST_CASE("a tensor-parallel rank's block: sizes by hand") {
  // h = 4, a = 2 x 3 = 6, f = 6. Per layer: Wqkv 4 x 18 = 72 and its bias 18, Wo 6 x 4 = 24 and
  // its bias 4, W1 4 x 6 = 24 and its bias 6, W2 6 x 4 = 24 and its bias 4, two layer norms 16:
  // 192 floats; two layers.
  // Kept per token from F: x-hat, LN1, x-hat, LN2 (4 each), QKV 18, heads 6, u and GELU 6 each:
  // 52; from I: dy, dLN2, dy1, dLN1 (4 each), du 6, dQKV 18: 40; two reciprocal deviations.
  // 6 tokens x 94 + 2 samples x 2 heads x 3^2 = 600 per layer.
  // F, I and W: 3 x 2 x 6 tokens x (4 x 18 + 6 x 4 + 4 x 6 + 6 x 4) for the weight products, and
  // 3 x 2 x 2 products x 2 samples x 2 heads x 3 x 3 x 3 for attention; two layers.
  check_sizes(
      shard_shape(),
      {.parameters = 2 * 192,
       .kept = 2 * 600,
       .flops = 2 * (3 * 2 * 6 * 144 + 3 * 2 * 2 * 2 * 2 * 27),
       .description = "2 transformer blocks of width 4, 2 heads of 3 features, an MLP of 6, "
                      "sequences of 3"});
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
