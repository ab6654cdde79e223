#include "executor/transformer_block.hpp"

#include <algorithm>
#include <cmath>

#include "core/rng.hpp"

namespace recycle::executor::transformer {

Offsets::Offsets(const Dims& d) noexcept {
  const auto h = static_cast<std::size_t>(d.width);
  const auto a = static_cast<std::size_t>(d.attention());
  const auto f = static_cast<std::size_t>(d.ffn);
  std::size_t at = 0;
  const auto take = [&at](std::size_t n) {
    const std::size_t here = at;
    at += n;
    return here;
  };
  g1 = take(h);
  b1n = take(h);
  wqkv = take(3 * a * h);
  bqkv = take(3 * a);
  wo = take(a * h);
  bo = take(h);
  g2 = take(h);
  b2n = take(h);
  w1 = take(f * h);
  b1 = take(f);
  w2 = take(f * h);
  b2 = take(h);
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
  const auto per_token = 8 * static_cast<std::size_t>(d.width) +
                         7 * static_cast<std::size_t>(d.attention()) +
                         3 * static_cast<std::size_t>(d.ffn) + 2;
  return t * per_token + probabilities(d);
}

std::size_t transient_floats(const Dims& d) noexcept {
  const auto t = static_cast<std::size_t>(d.tokens());
  return probabilities(d) +
         t * (static_cast<std::size_t>(d.attention()) + 2 * static_cast<std::size_t>(d.width));
}

double flops(const Dims& d) noexcept {
  const double h = d.width, a = d.attention(), f = d.ffn;
  return 6.0 * d.tokens() * (4 * a * h + 2 * f * h) +
         12.0 * d.samples * d.sequence * d.sequence * a;
}

void init_layer(float* params, const Dims& d, std::uint64_t seed) {
  const Offsets o(d);
  const auto h = static_cast<std::size_t>(d.width);
  const auto a = static_cast<std::size_t>(d.attention());
  const auto f = static_cast<std::size_t>(d.ffn);
  Rng rng(seed);
  const auto uniform = [&rng](float* out, std::size_t n, double fan_in) {
    const double scale = std::sqrt(3.0 / fan_in);
    for (std::size_t i = 0; i < n; ++i)
      out[i] = static_cast<float>(scale * (2 * rng.uniform() - 1));
  };
  std::fill(params, params + o.end, 0.0F);
  std::fill(params + o.g1, params + o.g1 + h, 1.0F);
  std::fill(params + o.g2, params + o.g2 + h, 1.0F);
  uniform(params + o.wqkv, 3 * a * h, static_cast<double>(h));
  uniform(params + o.wo, a * h, static_cast<double>(a));
  uniform(params + o.w1, f * h, static_cast<double>(h));
  uniform(params + o.w2, f * h, static_cast<double>(f));
}

}  // namespace recycle::executor::transformer
