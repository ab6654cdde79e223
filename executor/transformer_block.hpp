// The executor's transformer-block workload: a pre-norm GPT block, with the backward pass split as
// the schedules split it, so that a stage does the kinds of work the profiles model (QKV,
// attention, projection and MLP matrix products; softmax, layer norm and GELU in between). This
// file holds its shape, sizes, parameter layout and initial values; its F, I and W are
// executor/transformer_layers.hpp, written once over a backend's arithmetic.
//
// One layer maps the micro-batch's tokens x (samples x sequence rows, `width` columns, row-major)
// to
//   y1 = x + Attn(LN1(x)),   y = y1 + GELU(LN2(y1) W1 + b1) W2 + b2,
// with Attn causal multi-head self-attention: [Q K V] = LN1(x) Wqkv + bqkv, per head
// softmax(Q K^T / sqrt(d) masked to earlier tokens) V, the heads side by side times Wo plus bo.
// LN is layer norm over a row (epsilon 1e-5) with a gain and a bias; GELU its tanh form.
// A GPT layer has heads x d = h and a 4h MLP. One tensor-parallel rank of a layer split over t
// GPUs (Megatron-LM's split: Wqkv and W1 by columns, Wo and W2 by rows) computes the same block
// with heads / t heads and an MLP of 4h / t: Dims says how many heads and how wide the MLP, and
// the block is that rank's arithmetic (the all-reduces of the two products' partial outputs
// between ranks are not part of it).
//  - F keeps what I and W read (normalized inputs, the layer norms' outputs, Q K V, the
//    attention probabilities, the heads' outputs, the MLP's pre-activation and activation);
//  - I computes the gradient of the layer input and keeps the gradient of every matrix
//    product's output (and of each layer norm's output) for W;
//  - W accumulates the gradients of the four weight matrices, their biases and the layer norms'
//    gains and biases: the weight-gradient matrix products ZB and ReCycle move into bubbles.
#pragma once

#include <cstddef>
#include <cstdint>

namespace recycle::executor::transformer {

struct Dims {
  std::int32_t samples = 1;   ///< sequences per micro-batch
  std::int32_t sequence = 1;  ///< tokens per sequence
  std::int32_t width = 1;     ///< hidden size h
  std::int32_t heads = 1;     ///< attention heads
  std::int32_t head_dim = 1;  ///< d, features per head
  std::int32_t ffn = 4;       ///< f, the MLP's inner width

  [[nodiscard]] std::int32_t tokens() const noexcept { return samples * sequence; }
  /// a = heads x d: the width of Q, K, V and of the heads side by side.
  [[nodiscard]] std::int32_t attention() const noexcept { return heads * head_dim; }
};

/// Floats of one layer's parameters: Wqkv (h x 3a), Wo (a x h), W1 (h x f), W2 (f x h), their
/// biases and two layer norms' gains and biases: 4 a h + 2 f h + 3 a + f + 6 h (12 h^2 + 13 h
/// for a GPT layer).
[[nodiscard]] std::size_t layer_parameters(const Dims& dims) noexcept;
/// Floats one micro-batch keeps per layer from F until W: per token 8 h + 7 a + 3 f (4 h + 4 a +
/// 2 f from F, 4 h + 3 a + f from I; 27 h for a GPT layer), two per token (the layer norms'
/// reciprocal deviations) and the attention probabilities (samples x heads x sequence^2).
[[nodiscard]] std::size_t kept_floats(const Dims& dims) noexcept;
/// Floats one micro-batch's I holds on top of what is kept while it runs: the probabilities'
/// gradient (samples x heads x sequence^2), the heads' gradient (tokens x a) and the incoming and
/// outgoing gradients (2 x tokens x h).
[[nodiscard]] std::size_t transient_floats(const Dims& dims) noexcept;
/// Floating-point operations of one layer's F, I and W for one micro-batch: 6 tokens (4 a h +
/// 2 f h) for the matrix products with the weights (72 tokens h^2 for a GPT layer), 12 samples
/// sequence^2 a for attention.
[[nodiscard]] double flops(const Dims& dims) noexcept;

/// Initial parameters of one layer into `params` (layer_parameters floats): weights uniform in
/// +-sqrt(3 / fan-in) from `seed`, gains 1, biases 0.
void init_layer(float* params, const Dims& dims, std::uint64_t seed);

/// Where each parameter tensor of a layer starts, in this order: the first layer norm's gain and
/// bias (g1, b1n), Wqkv and its bias, Wo and its bias, the second layer norm's gain and bias (g2,
/// b2n), W1 and b1, W2 and b2. Gradients are laid out the same way.
struct Offsets {
  std::size_t g1, b1n, wqkv, bqkv, wo, bo, g2, b2n, w1, b1, w2, b2, end;
  explicit Offsets(const Dims& dims) noexcept;
};

/// What F keeps for one layer, in this order (executor/transformer_layers.hpp): LN1's normalized
/// input and reciprocal deviations and output, Q K V side by side, the attention probabilities,
/// the heads' outputs side by side, the same three for LN2, the MLP's pre-activation and its GELU.
enum Saved : std::size_t {
  kXhat1,
  kRstd1,
  kLn1,
  kQkv,
  kProbs,
  kHeads,
  kXhat2,
  kRstd2,
  kLn2,
  kU,
  kGelu,
  kSavedPerLayer
};
/// What I keeps for W, per layer: the gradients of the layer output (= of the MLP's output), of
/// the MLP's pre-activation, of LN2's output, of y1 (= of the attention projection's output), of
/// Q K V and of LN1's output.
enum Grads : std::size_t { kDy, kDu, kDln2, kDy1, kDqkv, kDln1, kGradsPerLayer };

}  // namespace recycle::executor::transformer
