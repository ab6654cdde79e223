#include "executor/transformer_block.hpp"

#include <algorithm>
#include <cmath>

#include "core/rng.hpp"

namespace recycle::executor::transformer {

Offsets::Offsets(const Dims& d) noexcept {
  const auto h = static_cast<std::size_t>(d.width);
  const auto a = static_cast<std::size_t>(d.attention());
  const auto q = static_cast<std::size_t>(d.qkv());
  const auto m = static_cast<std::size_t>(d.mlp_in());
  const auto f = static_cast<std::size_t>(d.ffn);
  const std::size_t norm_bias = d.style.rms_norm ? 0 : 1;
  const std::size_t bias = d.style.bias ? 1 : 0;
  std::size_t at = 0;
  const auto take = [&at](std::size_t n) {
    const std::size_t here = at;
    at += n;
    return here;
  };
  g1 = take(h);
  b1n = take(norm_bias * h);
  wqkv = take(q * h);
  bqkv = take(bias * q);
  wo = take(a * h);
  bo = take(bias * h);
  g2 = take(h);
  b2n = take(norm_bias * h);
  w1 = take(m * h);
  b1 = take(bias * m);
  w2 = take(f * h);
  b2 = take(bias * h);
  end = at;
}

std::size_t layer_parameters(const Dims& d) noexcept {
  return Offsets(d).end;
}

namespace {

/// Floats of the attention probabilities of one micro-batch: samples x heads x sequence^2.
std::size_t probabilities(const Dims& d) noexcept {
  const auto s = static_cast<std::size_t>(d.sequence);
  return static_cast<std::size_t>(d.samples) * static_cast<std::size_t>(d.heads) * s * s;
}

}  // namespace

std::size_t kept_floats(const Dims& d) noexcept {
  const auto t = static_cast<std::size_t>(d.tokens());
  const auto per_token =
      8 * static_cast<std::size_t>(d.width) + 2 * static_cast<std::size_t>(d.qkv()) +
      static_cast<std::size_t>(d.attention()) + 2 * static_cast<std::size_t>(d.mlp_in()) +
      static_cast<std::size_t>(d.ffn) + 2;
  return t * per_token + probabilities(d);
}

std::size_t transient_floats(const Dims& d) noexcept {
  const auto t = static_cast<std::size_t>(d.tokens());
  const std::size_t activation_gradient = d.style.gated_mlp ? static_cast<std::size_t>(d.ffn) : 0;
  return probabilities(d) + t * (static_cast<std::size_t>(d.attention()) +
                                 2 * static_cast<std::size_t>(d.width) + activation_gradient);
}

double flops(const Dims& d) noexcept {
  const double h = d.width, a = d.attention(), q = d.qkv(), m = d.mlp_in(), f = d.ffn;
  return 6.0 * d.tokens() * h * (q + a + m + f) + 12.0 * d.samples * d.sequence * d.sequence * a;
}

void init_layer(float* params, const Dims& d, std::uint64_t seed) {
  const Offsets o(d);
  const auto h = static_cast<std::size_t>(d.width);
  const auto a = static_cast<std::size_t>(d.attention());
  const auto f = static_cast<std::size_t>(d.ffn);
  const auto q = static_cast<std::size_t>(d.qkv());
  const auto m = static_cast<std::size_t>(d.mlp_in());
  Rng rng(seed);
  const auto uniform = [&rng](float* out, std::size_t n, double fan_in) {
    const double scale = std::sqrt(3.0 / fan_in);
    for (std::size_t i = 0; i < n; ++i)
      out[i] = static_cast<float>(scale * (2 * rng.uniform() - 1));
  };
  std::fill(params, params + o.end, 0.0F);
  std::fill(params + o.g1, params + o.g1 + h, 1.0F);
  std::fill(params + o.g2, params + o.g2 + h, 1.0F);
  uniform(params + o.wqkv, q * h, static_cast<double>(h));
  uniform(params + o.wo, a * h, static_cast<double>(a));
  uniform(params + o.w1, m * h, static_cast<double>(h));
  uniform(params + o.w2, f * h, static_cast<double>(f));
}

}  // namespace recycle::executor::transformer
