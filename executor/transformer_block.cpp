#include "executor/transformer_block.hpp"

#include <algorithm>
#include <cmath>

#include "core/rng.hpp"

namespace recycle::executor::transformer {

Offsets::Offsets(std::int32_t width) noexcept {
  const auto h = static_cast<std::size_t>(width);
  std::size_t at = 0;
  const auto take = [&at](std::size_t n) {
    const std::size_t here = at;
    at += n;
    return here;
  };
  g1 = take(h);
  b1n = take(h);
  wqkv = take(3 * h * h);
  bqkv = take(3 * h);
  wo = take(h * h);
  bo = take(h);
  g2 = take(h);
  b2n = take(h);
  w1 = take(4 * h * h);
  b1 = take(4 * h);
  w2 = take(4 * h * h);
  b2 = take(h);
}

std::size_t layer_parameters(std::int32_t width) noexcept {
  const auto h = static_cast<std::size_t>(width);
  return 12 * h * h + 13 * h;
}

std::size_t kept_floats(const Dims& d) noexcept {
  const auto t = static_cast<std::size_t>(d.tokens());
  const auto s = static_cast<std::size_t>(d.sequence);
  return 27 * t * static_cast<std::size_t>(d.width) + 2 * t +
         static_cast<std::size_t>(d.samples) * static_cast<std::size_t>(d.heads) * s * s;
}

double flops(const Dims& d) noexcept {
  const double h = d.width;
  return 72.0 * d.tokens() * h * h + 12.0 * d.samples * d.sequence * d.sequence * h;
}

void init_layer(float* params, std::int32_t width, std::uint64_t seed) {
  const Offsets o(width);
  const auto h = static_cast<std::size_t>(width);
  Rng rng(seed);
  const auto uniform = [&rng](float* out, std::size_t n, double fan_in) {
    const double scale = std::sqrt(3.0 / fan_in);
    for (std::size_t i = 0; i < n; ++i)
      out[i] = static_cast<float>(scale * (2 * rng.uniform() - 1));
  };
  std::fill(params, params + layer_parameters(width), 0.0F);
  std::fill(params + o.g1, params + o.g1 + h, 1.0F);
  std::fill(params + o.g2, params + o.g2 + h, 1.0F);
  uniform(params + o.wqkv, 3 * h * h, static_cast<double>(h));
  uniform(params + o.wo, h * h, static_cast<double>(h));
  uniform(params + o.w1, 4 * h * h, static_cast<double>(h));
  uniform(params + o.w2, 4 * h * h, 4.0 * static_cast<double>(h));
}

}  // namespace recycle::executor::transformer
