// The executor's transformer-block workload: a pre-norm GPT block, with the backward pass split as
// the schedules split it, so that a stage does the kinds of work the profiles model (QKV,
// attention, projection and MLP matrix products; softmax, layer norm and GELU in between).
//
// One layer maps the micro-batch's tokens x (samples x sequence rows, `width` columns, row-major)
// to
//   y1 = x + Attn(LN1(x)),   y = y1 + W2-projection of GELU(LN2(y1) W1 + b1) + b2,
// with Attn causal multi-head self-attention: [Q K V] = LN1(x) Wqkv + bqkv, per head
// softmax(Q K^T / sqrt(d) masked to earlier tokens) V, the heads side by side times Wo plus bo.
// LN is layer norm over a row (epsilon 1e-5) with a gain and a bias; GELU its tanh form.
//  - F keeps what I and W read (normalized inputs, the layer norms' outputs, Q K V, the
//    attention probabilities, the heads' outputs, the MLP's pre-activation and activation);
//  - I computes the gradient of the layer input and keeps the gradient of every matrix
//    product's output (and of each layer norm's output) for W;
//  - W accumulates the gradients of the four weight matrices, their biases and the layer norms'
//    gains and biases: the weight-gradient matrix products ZB and ReCycle move into bubbles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace recycle::executor::transformer {

struct Dims {
  std::int32_t samples = 1;   ///< sequences per micro-batch
  std::int32_t sequence = 1;  ///< tokens per sequence
  std::int32_t width = 1;     ///< hidden size h
  std::int32_t heads = 1;     ///< attention heads; divides width

  [[nodiscard]] std::int32_t tokens() const noexcept { return samples * sequence; }
};

/// Floats of one layer's parameters: Wqkv (h x 3h), Wo (h x h), W1 (h x 4h), W2 (4h x h), their
/// biases and two layer norms' gains and biases: 12 h^2 + 13 h.
[[nodiscard]] std::size_t layer_parameters(std::int32_t width) noexcept;
/// Floats one micro-batch keeps per layer from F until W: 27 x tokens x h (16 from F, 11 from
/// I), two per token (the layer norms' reciprocal deviations) and the attention probabilities
/// (samples x heads x sequence^2).
[[nodiscard]] std::size_t kept_floats(const Dims& dims) noexcept;
/// Floating-point operations of one layer's F, I and W for one micro-batch: 72 tokens h^2 for
/// the matrix products with the weights, 12 samples sequence^2 h for attention.
[[nodiscard]] double flops(const Dims& dims) noexcept;

/// Initial parameters of one layer into `params` (layer_parameters floats): weights uniform in
/// +-sqrt(3 / fan-in) from `seed`, gains 1, biases 0.
void init_layer(float* params, std::int32_t width, std::uint64_t seed);

/// F of one layer: `x` (tokens x h) to the returned output; appends what I and W read to `saved`.
[[nodiscard]] std::vector<float> forward(const Dims& dims, const float* params,
                                         const std::vector<float>& x,
                                         std::vector<std::vector<float>>& saved);
/// I of one layer: the gradient of its input from that of its output, reading the layer's
/// `saved` (forward's, from `first`); appends what W reads to `grads`.
[[nodiscard]] std::vector<float> backward_input(const Dims& dims, const float* params,
                                                const std::vector<std::vector<float>>& saved,
                                                std::size_t first, const std::vector<float>& dy,
                                                std::vector<std::vector<float>>& grads);
/// W of one layer: adds its parameters' gradients (laid out as the parameters) to `gradient`.
void backward_weight(const Dims& dims, const std::vector<std::vector<float>>& saved,
                     std::size_t saved_first, const std::vector<std::vector<float>>& grads,
                     std::size_t grads_first, float* gradient);

/// How many tensors forward appends to `saved` and backward_input to `grads`, per layer.
inline constexpr std::size_t kSavedPerLayer = 11;
inline constexpr std::size_t kGradsPerLayer = 6;

}  // namespace recycle::executor::transformer
