// A stage of transformer blocks (executor/transformer_block.hpp says what one block computes and
// what each pass keeps), F, I and W written once over a backend's arithmetic (`Ops`,
// executor/layer_ops.hpp): the cpu backend runs them on OpenBLAS and loops, the cuda backend on
// cuBLAS and kernels. Attention runs as batched products over the heads of one sequence at a
// time (Q of query head j is columns j d.. (j + 1) d of the QKV rows, K and V of key/value head c
// columns a + c d.. and a + kv + c d.., with a = heads x d and kv = kv_heads x d).
//
// Parameters: layer l's block at l x layer_parameters(dims), laid out as transformer::Offsets.
// `saved` holds kSavedPerLayer buffers per layer and `grads` kGradsPerLayer, layer l's first at
// l x that count.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "executor/layer_ops.hpp"
#include "executor/stage_math.hpp"
#include "executor/transformer_block.hpp"

namespace recycle::executor {

template <class Ops>
class TransformerLayers {
 public:
  using Buffer = typename Ops::Buffer;

  TransformerLayers(Ops& ops, const StageShape& shape)
      : ops_(ops), layers_(shape.layers), d_(transformer_dims(shape)), o_(d_) {}

  /// F: the stage output for `input`; appends each layer's kept buffers to `saved`.
  Buffer forward(const float* params, const Buffer& input, std::vector<Buffer>& saved) {
    Buffer x = make(d_.width);
    ops_.copy(x.data(), input.data(), x.size());
    for (std::int32_t l = 0; l < layers_; ++l) x = forward_layer(params + block(l), x, saved);
    return x;
  }

  /// I: the gradient of the stage input from that of its output; fills `grads`.
  Buffer backward_input(const float* params, const std::vector<Buffer>& saved,
                        const Buffer& output_gradient, std::vector<Buffer>& grads) {
    grads.clear();
    const auto per = static_cast<std::size_t>(transformer::kGradsPerLayer);
    for (std::size_t i = 0; i < static_cast<std::size_t>(layers_) * per; ++i)
      grads.push_back(ops_.make(0));
    Buffer dy = make(d_.width);
    ops_.copy(dy.data(), output_gradient.data(), dy.size());
    for (std::int32_t l = layers_ - 1; l >= 0; --l) {
      const auto li = static_cast<std::size_t>(l);
      dy = backward_input_layer(params + block(l), saved.data() + li * transformer::kSavedPerLayer,
                                std::move(dy), grads.data() + li * per);
    }
    return dy;
  }

  /// W: adds every layer's parameter gradients to `gradients` (laid out as the parameters).
  void backward_weight(const std::vector<Buffer>& saved, const std::vector<Buffer>& grads,
                       float* gradients) {
    for (std::int32_t l = 0; l < layers_; ++l) {
      const auto li = static_cast<std::size_t>(l);
      backward_weight_layer(saved.data() + li * transformer::kSavedPerLayer,
                            grads.data() + li * transformer::kGradsPerLayer, gradients + block(l));
    }
  }

 private:
  using T = transformer::Saved;
  using G = transformer::Grads;

  [[nodiscard]] std::size_t block(std::int32_t layer) const noexcept {
    return static_cast<std::size_t>(layer) * o_.end;
  }
  /// A buffer of tokens x `columns` floats.
  Buffer make(std::int32_t columns) {
    return ops_.make(static_cast<std::size_t>(d_.tokens()) * static_cast<std::size_t>(columns));
  }
  [[nodiscard]] float scale() const { return 1.0F / std::sqrt(static_cast<float>(d_.head_dim)); }
  /// Floats of one sample's attention probabilities over every head.
  [[nodiscard]] std::ptrdiff_t probs_per_sample() const noexcept {
    return std::ptrdiff_t{d_.heads} * d_.sequence * d_.sequence;
  }

  /// The norm of `x` (layer norm, or RMSNorm when `bias` is null) into the kept buffers k[xhat],
  /// k[rstd] and k[out].
  void keep_layer_norm(Buffer* k, std::size_t xhat, std::size_t rstd, std::size_t out,
                       const float* x, const float* gain, const float* bias) {
    k[xhat] = make(d_.width);
    k[rstd] = ops_.make(static_cast<std::size_t>(d_.tokens()));
    k[out] = make(d_.width);
    ops_.layer_norm(k[out].data(), k[xhat].data(), k[rstd].data(), x, gain, bias, d_.tokens(),
                    d_.width);
  }

  /// A norm's bias, or null for RMSNorm (which has none); the same for its gradient.
  template <class F>
  [[nodiscard]] F* norm_bias(F* bias) const noexcept {
    return d_.style.rms_norm ? nullptr : bias;
  }
  /// z = the bias in every row when the style has biases; the beta a product adds onto z with.
  float start_with_bias(float* z, const float* bias, int columns) {
    if (!d_.style.bias) return 0.0F;
    ops_.fill_rows(z, bias, d_.tokens(), columns);
    return 1.0F;
  }
  /// z = x (+ the bias in every row): a residual branch's start.
  void start_residual(float* z, const float* x, const float* bias) {
    if (d_.style.bias) {
      ops_.fill_rows(z, bias, d_.tokens(), d_.width);
      ops_.add(z, x, static_cast<std::size_t>(d_.tokens()) * static_cast<std::size_t>(d_.width));
    } else {
      ops_.copy(z, x, static_cast<std::size_t>(d_.tokens()) * static_cast<std::size_t>(d_.width));
    }
  }
  /// Rotates Q and K of every token (inverse: their gradients back) when the style is rotary.
  void rotate(float* qkv, bool inverse) {
    if (!d_.style.rotary) return;
    ops_.rotary(qkv, d_.tokens(), d_.qkv(), d_.heads + d_.kv_heads, d_.head_dim, d_.sequence,
                inverse);
  }

  // Grouped-query attention as batched products: for each r < group, one batch over the
  // key/value heads c, whose item is query head j = c x group + r (Q at column j d, the
  // probabilities at j sequence^2) with key/value head c (K at column a + c d, V at a + kv + c d).

  Buffer forward_layer(const float* p, const Buffer& x, std::vector<Buffer>& saved) {
    const int t = d_.tokens(), h = d_.width, s = d_.sequence, dh = d_.head_dim, a = d_.attention(),
              kv = d_.kv(), q3 = d_.qkv(), m = d_.mlp_in(), f = d_.ffn, g = d_.group();
    const std::size_t first = saved.size();
    for (std::size_t i = 0; i < transformer::kSavedPerLayer; ++i) saved.push_back(ops_.make(0));
    Buffer* k = saved.data() + first;

    keep_layer_norm(k, T::kXhat1, T::kRstd1, T::kLn1, x.data(), p + o_.g1, norm_bias(p + o_.b1n));
    k[T::kQkv] = make(q3);
    float* qkv = k[T::kQkv].data();
    const float qkv_beta = start_with_bias(qkv, p + o_.bqkv, q3);
    gemm_row_major(ops_, false, false, t, q3, h, k[T::kLn1].data(), h, p + o_.wqkv, q3, qkv_beta,
                   qkv, q3);
    rotate(qkv, false);

    // Causal attention: scores Q K^T / sqrt(d) per query head, the masked softmax, then P V.
    k[T::kProbs] = ops_.make(static_cast<std::size_t>(d_.samples * probs_per_sample()));
    float* probs = k[T::kProbs].data();
    k[T::kHeads] = make(a);
    const std::ptrdiff_t ss = std::ptrdiff_t{s} * s;
    for (int b = 0; b < d_.samples; ++b) {
      const float* q = qkv + std::ptrdiff_t{b} * s * q3;
      for (int r = 0; r < g; ++r) {
        gemm_row_major_batched(ops_, false, true, s, s, dh, scale(), q + r * dh, q3, g * dh, q + a,
                               q3, dh, 0.0F, probs + b * probs_per_sample() + r * ss, s, g * ss,
                               d_.kv_heads);
      }
    }
    ops_.causal_softmax(probs, s, d_.samples * d_.heads);
    for (int b = 0; b < d_.samples; ++b) {
      const float* q = qkv + std::ptrdiff_t{b} * s * q3;
      float* out = k[T::kHeads].data() + std::ptrdiff_t{b} * s * a;
      for (int r = 0; r < g; ++r) {
        gemm_row_major_batched(ops_, false, false, s, dh, s, 1.0F,
                               probs + b * probs_per_sample() + r * ss, s, g * ss, q + a + kv, q3,
                               dh, 0.0F, out + r * dh, a, g * dh, d_.kv_heads);
      }
    }

    // y1 = x + bo + heads Wo
    Buffer y1 = make(h);
    start_residual(y1.data(), x.data(), p + o_.bo);
    gemm_row_major(ops_, false, false, t, h, a, k[T::kHeads].data(), a, p + o_.wo, h, 1.0F,
                   y1.data(), h);

    // y = y1 + b2 + Act(N2(y1) W1 + b1) W2
    keep_layer_norm(k, T::kXhat2, T::kRstd2, T::kLn2, y1.data(), p + o_.g2, norm_bias(p + o_.b2n));
    k[T::kU] = make(m);
    const float u_beta = start_with_bias(k[T::kU].data(), p + o_.b1, m);
    gemm_row_major(ops_, false, false, t, m, h, k[T::kLn2].data(), h, p + o_.w1, m, u_beta,
                   k[T::kU].data(), m);
    k[T::kAct] = make(f);
    if (d_.style.gated_mlp) {
      ops_.swiglu(k[T::kAct].data(), k[T::kU].data(), t, f);
    } else {
      ops_.gelu(k[T::kAct].data(), k[T::kU].data(), k[T::kU].size());
    }
    Buffer y = make(h);
    start_residual(y.data(), y1.data(), p + o_.b2);
    gemm_row_major(ops_, false, false, t, h, f, k[T::kAct].data(), f, p + o_.w2, h, 1.0F, y.data(),
                   h);
    return y;
  }

  Buffer backward_input_layer(const float* p, const Buffer* k, Buffer dy, Buffer* gr) {
    const int t = d_.tokens(), h = d_.width, s = d_.sequence, dh = d_.head_dim, a = d_.attention(),
              kv = d_.kv(), q3 = d_.qkv(), m = d_.mlp_in(), f = d_.ffn, g = d_.group();
    const bool centered = !d_.style.rms_norm;

    // MLP: du = (dy W2^T) Act'(u); dln2 = du W1^T; dy1 = dy + N2's input gradient.
    gr[G::kDu] = make(m);
    float* du = gr[G::kDu].data();
    if (d_.style.gated_mlp) {
      Buffer dact = make(f);
      gemm_row_major(ops_, false, true, t, f, h, dy.data(), h, p + o_.w2, h, 0.0F, dact.data(), f);
      ops_.swiglu_backward(du, dact.data(), k[T::kU].data(), t, f);
    } else {
      gemm_row_major(ops_, false, true, t, f, h, dy.data(), h, p + o_.w2, h, 0.0F, du, f);
      ops_.gelu_backward(du, k[T::kU].data(), gr[G::kDu].size());
    }
    gr[G::kDln2] = make(h);
    gemm_row_major(ops_, false, true, t, h, m, du, m, p + o_.w1, m, 0.0F, gr[G::kDln2].data(), h);
    gr[G::kDy1] = make(h);
    float* dy1 = gr[G::kDy1].data();
    ops_.copy(dy1, dy.data(), dy.size());
    ops_.layer_norm_backward(dy1, gr[G::kDln2].data(), k[T::kXhat2].data(), k[T::kRstd2].data(),
                             p + o_.g2, centered, t, h);
    gr[G::kDy] = std::move(dy);

    // Attention: d(heads) = dy1 Wo^T, then back through P V, the softmax and Q K^T; a key/value
    // head's gradients sum over its group's query heads (beta 1 after the first).
    Buffer dheads = make(a);
    gemm_row_major(ops_, false, true, t, a, h, dy1, h, p + o_.wo, h, 0.0F, dheads.data(), a);
    gr[G::kDqkv] = make(q3);
    float* dqkv = gr[G::kDqkv].data();
    const float* qkv = k[T::kQkv].data();
    const float* probs = k[T::kProbs].data();
    Buffer dp = ops_.make(static_cast<std::size_t>(d_.samples * probs_per_sample()));
    const std::ptrdiff_t ss = std::ptrdiff_t{s} * s;
    for (int b = 0; b < d_.samples; ++b) {
      const std::ptrdiff_t rows = std::ptrdiff_t{b} * s;
      const float* v = qkv + rows * q3 + a + kv;
      const float* dout = dheads.data() + rows * a;
      const float* pr = probs + b * probs_per_sample();
      for (int r = 0; r < g; ++r) {
        // dV = P^T dO
        gemm_row_major_batched(ops_, true, false, s, dh, s, 1.0F, pr + r * ss, s, g * ss,
                               dout + r * dh, a, g * dh, r == 0 ? 0.0F : 1.0F,
                               dqkv + rows * q3 + a + kv, q3, dh, d_.kv_heads);
        // dP = dO V^T
        gemm_row_major_batched(ops_, false, true, s, s, dh, 1.0F, dout + r * dh, a, g * dh, v, q3,
                               dh, 0.0F, dp.data() + b * probs_per_sample() + r * ss, s, g * ss,
                               d_.kv_heads);
      }
    }
    ops_.softmax_backward(dp.data(), probs, s, d_.samples * d_.heads);  // masked entries: P = 0
    for (int b = 0; b < d_.samples; ++b) {
      const std::ptrdiff_t rows = std::ptrdiff_t{b} * s;
      const float* q = qkv + rows * q3;
      const float* ds = dp.data() + b * probs_per_sample();
      for (int r = 0; r < g; ++r) {
        // dQ = dS K / sqrt(d), dK = dS^T Q / sqrt(d)
        gemm_row_major_batched(ops_, false, false, s, dh, s, scale(), ds + r * ss, s, g * ss, q + a,
                               q3, dh, 0.0F, dqkv + rows * q3 + r * dh, q3, g * dh, d_.kv_heads);
        gemm_row_major_batched(ops_, true, false, s, dh, s, scale(), ds + r * ss, s, g * ss,
                               q + r * dh, q3, g * dh, r == 0 ? 0.0F : 1.0F, dqkv + rows * q3 + a,
                               q3, dh, d_.kv_heads);
      }
    }
    rotate(dqkv, true);  // the gradients of Q and K before their rotation
    gr[G::kDln1] = make(h);
    gemm_row_major(ops_, false, true, t, h, q3, dqkv, q3, p + o_.wqkv, q3, 0.0F,
                   gr[G::kDln1].data(), h);
    Buffer dx = make(h);
    ops_.copy(dx.data(), dy1, dx.size());
    ops_.layer_norm_backward(dx.data(), gr[G::kDln1].data(), k[T::kXhat1].data(),
                             k[T::kRstd1].data(), p + o_.g1, centered, t, h);
    return dx;
  }

  /// W of a linear layer z = x Wt (+ b) over the tokens, x `in` wide and z `out` wide:
  /// dWt += x^T dz, and with biases db += dz's column sums.
  void linear_weight(const Buffer& x, int in, const Buffer& dz, int out, float* dw, float* db) {
    gemm_row_major(ops_, true, false, in, out, d_.tokens(), x.data(), in, dz.data(), out, 1.0F, dw,
                   out);
    if (d_.style.bias) ops_.add_column_sums(db, dz.data(), d_.tokens(), out);
  }

  void backward_weight_layer(const Buffer* k, const Buffer* gr, float* g) {
    const int t = d_.tokens(), h = d_.width, a = d_.attention(), q3 = d_.qkv(), m = d_.mlp_in(),
              f = d_.ffn;
    linear_weight(k[T::kAct], f, gr[G::kDy], h, g + o_.w2, g + o_.b2);
    linear_weight(k[T::kLn2], h, gr[G::kDu], m, g + o_.w1, g + o_.b1);
    ops_.layer_norm_weight(g + o_.g2, norm_bias(g + o_.b2n), gr[G::kDln2].data(),
                           k[T::kXhat2].data(), t, h);
    linear_weight(k[T::kHeads], a, gr[G::kDy1], h, g + o_.wo, g + o_.bo);
    linear_weight(k[T::kLn1], h, gr[G::kDqkv], q3, g + o_.wqkv, g + o_.bqkv);
    ops_.layer_norm_weight(g + o_.g1, norm_bias(g + o_.b1n), gr[G::kDln1].data(),
                           k[T::kXhat1].data(), t, h);
  }

  Ops& ops_;
  std::int32_t layers_;
  transformer::Dims d_;
  transformer::Offsets o_;
};

}  // namespace recycle::executor
