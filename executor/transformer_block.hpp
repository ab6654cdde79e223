// The executor's transformer-block workload: a pre-norm decoder block, GPT's or Llama's, with the
// backward pass split as the schedules split it, so that a stage does the kinds of work the
// profiles model (QKV, attention, projection and MLP matrix products; softmax, norms and the MLP's
// activation in between). This file holds its shape, sizes, parameter layout and initial values;
// its F, I and W are executor/transformer_layers.hpp, written once over a backend's arithmetic.
//
// One layer maps the micro-batch's tokens x (samples x sequence rows, `width` columns, row-major)
// to
//   y1 = x + Attn(N1(x)),   y = y1 + Act(N2(y1) W1 + b1) W2 + b2,
// with Attn causal self-attention: [Q K V] = N1(x) Wqkv + bqkv, Q `heads` heads of d features, K
// and V `kv_heads` heads each (grouped-query attention: query head j reads key/value head
// j / (heads / kv_heads)); per query head softmax(Q K^T / sqrt(d) masked to earlier tokens) V,
// the heads side by side times Wo plus bo.
//  - GPT (Style's defaults): N is layer norm over a row (epsilon 1e-5) with a gain and a bias; Act
//    is GELU, tanh form; every linear layer has a bias; kv_heads = heads.
//  - Llama (Style{gated_mlp, no bias, rms_norm, rotary}): N is RMSNorm (x / sqrt(mean(x^2) +
//    1e-5) times a gain); the MLP is SwiGLU, W1 = [Wgate Wup] (h x 2f) and Act(g, u) = SiLU(g) u;
//    no biases; Q and K rotated by position (rotary embedding, base 10000, each head's feature i
//    paired with feature i + d/2 as Megatron-LM pairs them by default; pairing neighbours instead
//    permutes the features and costs the same) before the scores.
// A GPT layer has heads x d = h and a 4h MLP. One tensor-parallel rank of a layer split over t
// GPUs (Megatron-LM's split: Wqkv and W1 by columns, Wo and W2 by rows) computes the same block
// with heads / t query heads, kv_heads / t key/value heads and an MLP of f / t: Dims says how
// many heads and how wide the MLP, and the block is that rank's arithmetic (the all-reduces of
// the two products' partial outputs between ranks are not part of it).
//  - F keeps what I and W read (normalized inputs, the norms' outputs, Q K V (Q and K rotated),
//    the attention probabilities, the heads' outputs, the MLP's pre-activation and activation);
//  - I computes the gradient of the layer input and keeps the gradient of every matrix
//    product's output (and of each norm's output) for W;
//  - W accumulates the gradients of the four weight matrices, their biases and the norms' gains
//    and biases: the weight-gradient matrix products ZB and ReCycle move into bubbles.
#pragma once

#include <cstddef>
#include <cstdint>

namespace recycle::executor::transformer {

/// Which block: GPT's by default, Llama's with every field set the other way.
struct Style {
  bool gated_mlp = false;  ///< SwiGLU (W1 h x 2f: gate, then up) instead of GELU (W1 h x f)
  bool bias = true;        ///< linear layers have biases
  bool rms_norm = false;   ///< RMSNorm (a gain) instead of layer norm (a gain and a bias)
  bool rotary = false;     ///< Q and K rotated by position (d even)

  bool operator==(const Style&) const = default;
};

/// The Llama style: RMSNorm, SwiGLU, rotary positions, no biases.
inline constexpr Style kLlama{.gated_mlp = true, .bias = false, .rms_norm = true, .rotary = true};

struct Dims {
  std::int32_t samples = 1;   ///< sequences per micro-batch
  std::int32_t sequence = 1;  ///< tokens per sequence
  std::int32_t width = 1;     ///< hidden size h
  std::int32_t heads = 1;     ///< query heads
  std::int32_t head_dim = 1;  ///< d, features per head
  std::int32_t ffn = 4;       ///< f, the MLP's inner width (of its activation)
  std::int32_t kv_heads = 1;  ///< key/value heads, dividing heads
  Style style{};

  [[nodiscard]] std::int32_t tokens() const noexcept { return samples * sequence; }
  /// a = heads x d: the width of Q and of the heads side by side.
  [[nodiscard]] std::int32_t attention() const noexcept { return heads * head_dim; }
  /// kv_heads x d: the width of K and of V.
  [[nodiscard]] std::int32_t kv() const noexcept { return kv_heads * head_dim; }
  /// a + 2 kv: the width of Q K V side by side.
  [[nodiscard]] std::int32_t qkv() const noexcept { return attention() + 2 * kv(); }
  /// The width of the MLP's first product: 2 f gated (gate and up), f otherwise.
  [[nodiscard]] std::int32_t mlp_in() const noexcept { return style.gated_mlp ? 2 * ffn : ffn; }
  /// Query heads per key/value head.
  [[nodiscard]] std::int32_t group() const noexcept { return heads / kv_heads; }
};

/// Floats of one layer's parameters: Wqkv (h x (a + 2 kv)), Wo (a x h), W1 (h x f, or h x 2f
/// gated), W2 (f x h), with biases their biases, and two norms' gains (and biases for layer norm):
/// 12 h^2 + 13 h for a GPT layer.
[[nodiscard]] std::size_t layer_parameters(const Dims& dims) noexcept;
/// Floats one micro-batch keeps per layer from F until W: per token 8 h + 2 q + a + 2 m + f with
/// q = a + 2 kv the QKV width and m the MLP's first product's width (4 h + q + a + m + f from F,
/// 4 h + q + m from I; 27 h for a GPT layer), two per token (the norms' reciprocal deviations) and
/// the attention probabilities (samples x heads x sequence^2).
[[nodiscard]] std::size_t kept_floats(const Dims& dims) noexcept;
/// Floats one micro-batch's I holds on top of what is kept while it runs: the probabilities'
/// gradient (samples x heads x sequence^2), the heads' gradient (tokens x a) and the incoming and
/// outgoing gradients (2 x tokens x h), and gated the gradient of the MLP's activation (tokens x
/// f).
[[nodiscard]] std::size_t transient_floats(const Dims& dims) noexcept;
/// Floating-point operations of one layer's F, I and W for one micro-batch: 6 tokens h (q + a + m +
/// f) for the matrix products with the weights (72 tokens h^2 for a GPT layer), 12 samples
/// sequence^2 a for attention (per query head, the full square, as profiles/flops.hpp counts).
[[nodiscard]] double flops(const Dims& dims) noexcept;

/// Initial parameters of one layer into `params` (layer_parameters floats): weights uniform in
/// +-sqrt(3 / fan-in) from `seed`, gains 1, biases 0.
void init_layer(float* params, const Dims& dims, std::uint64_t seed);

/// Where each parameter tensor of a layer starts, in this order: the first norm's gain and bias
/// (g1, b1n), Wqkv and its bias, Wo and its bias, the second norm's gain and bias (g2, b2n), W1
/// and b1, W2 and b2; a bias the style does not have takes no floats (it starts where the next
/// tensor does). Gradients are laid out the same way.
struct Offsets {
  std::size_t g1, b1n, wqkv, bqkv, wo, bo, g2, b2n, w1, b1, w2, b2, end;
  explicit Offsets(const Dims& dims) noexcept;
};

/// What F keeps for one layer, in this order (executor/transformer_layers.hpp): N1's normalized
/// input and reciprocal deviations and output, Q K V side by side, the attention probabilities,
/// the heads' outputs side by side, the same three for N2, the MLP's pre-activation and its
/// activation.
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
  kAct,
  kSavedPerLayer
};
/// What I keeps for W, per layer: the gradients of the layer output (= of the MLP's output), of
/// the MLP's pre-activation, of N2's output, of y1 (= of the attention projection's output), of
/// Q K V (before the rotation) and of N1's output.
enum Grads : std::size_t { kDy, kDu, kDln2, kDy1, kDqkv, kDln1, kGradsPerLayer };

}  // namespace recycle::executor::transformer
