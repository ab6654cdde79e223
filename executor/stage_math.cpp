#include "executor/stage_math.hpp"

#include <algorithm>
#include <cmath>

#include "core/rng.hpp"
#include "executor/cpu_ops.hpp"
#include "executor/stage_layers.hpp"
#include "executor/transformer_block.hpp"

namespace recycle::executor {

namespace {

/// A seed that mixes its parts so that neighbouring (iteration, owner, micro-batch) differ.
std::uint64_t mix(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  Rng rng(seed ^ (a * 0x9E3779B97F4A7C15ULL) ^ (b * 0xC2B2AE3D27D4EB4FULL) ^
          (c * 0x165667B19E3779F9ULL));
  return rng.next();
}

std::vector<float> uniform(std::size_t n, std::uint64_t seed, double scale) {
  Rng rng(seed);
  std::vector<float> out(n);
  for (float& x : out) x = static_cast<float>(scale * (2 * rng.uniform() - 1));
  return out;
}

}  // namespace

transformer::Dims transformer_dims(const StageShape& shape) noexcept {
  const std::int32_t head_dim =
      shape.head_dim > 0 ? shape.head_dim : shape.width / std::max(1, shape.heads);
  const std::int32_t ffn = shape.ffn > 0 ? shape.ffn : 4 * shape.width;
  const std::int32_t kv_heads = shape.kv_heads > 0 ? shape.kv_heads : shape.heads;
  return {shape.microbatch_size,
          shape.sequence,
          shape.width,
          shape.heads,
          head_dim,
          ffn,
          kv_heads,
          shape.style};
}

std::size_t parameter_floats(const StageShape& shape) noexcept {
  const auto w = static_cast<std::size_t>(shape.width);
  const auto l = static_cast<std::size_t>(shape.layers);
  return shape.block == Block::kTransformer
             ? l * transformer::layer_parameters(transformer_dims(shape))
             : l * (w * w + w);
}

std::size_t chunk_floats(const StageShape& shape) noexcept {
  const auto l = static_cast<std::size_t>(shape.layers);
  if (shape.block == Block::kTransformer)
    return l * transformer::kept_floats(transformer_dims(shape));
  // Per layer its input and output from F, its dz from I.
  return 3 * l * static_cast<std::size_t>(shape.rows()) * static_cast<std::size_t>(shape.width);
}

double chunk_flops(const StageShape& shape) noexcept {
  if (shape.block == Block::kTransformer)
    return shape.layers * transformer::flops(transformer_dims(shape));
  // F, I and W: one product of rows x width by width x width per layer each.
  return 3 * 2 * static_cast<double>(shape.rows()) * shape.width * shape.width * shape.layers;
}

std::size_t transient_floats(const StageShape& shape) noexcept {
  if (shape.block == Block::kTransformer)
    return transformer::transient_floats(transformer_dims(shape));
  // The incoming and outgoing gradients of a layer.
  return 2 * static_cast<std::size_t>(shape.rows()) * static_cast<std::size_t>(shape.width);
}

std::string describe_layers(const StageShape& shape) {
  const std::string count = std::to_string(shape.layers);
  const std::string width = " of width " + std::to_string(shape.width);
  if (shape.block == Block::kTransformer) {
    const transformer::Dims d = transformer_dims(shape);
    std::string out = count + " transformer block" + (shape.layers == 1 ? "" : "s") + width + ", " +
                      std::to_string(shape.heads) + " heads";
    if (d.attention() != d.width) out += " of " + std::to_string(d.head_dim) + " features";
    if (d.kv_heads != d.heads) {
      out += " (" + std::to_string(d.kv_heads) + " key/value head" + (d.kv_heads == 1 ? ")" : "s)");
    }
    if (d.ffn != 4 * d.width) out += ", an MLP of " + std::to_string(d.ffn);
    out += ", sequences of " + std::to_string(shape.sequence);
    const transformer::Style& st = d.style;
    if (st == transformer::kLlama)
      return out + ", Llama-style (RMSNorm, SwiGLU, rotary, no biases)";
    if (st == transformer::Style{}) return out;
    std::vector<std::string> has;
    if (st.rms_norm) has.emplace_back("RMSNorm");
    if (st.gated_mlp) has.emplace_back("SwiGLU");
    if (st.rotary) has.emplace_back("rotary");
    if (!st.bias) has.emplace_back("no biases");
    std::string list;
    for (const std::string& x : has) list += (list.empty() ? "" : ", ") + x;
    return out + " (" + list + ")";
  }
  return count + " dense layer" + (shape.layers == 1 ? "" : "s") + width;
}

StageParams::StageParams(const StageShape& shape, std::int32_t stage, std::uint64_t seed)
    : shape_(shape) {
  if (shape.block == Block::kTransformer) {
    params_.resize(parameter_floats(shape));
    for (std::int32_t l = 0; l < shape.layers; ++l) {
      transformer::init_layer(
          params_.data() + block_offset(l), transformer_dims(shape),
          mix(seed, 1, static_cast<std::uint64_t>(stage), static_cast<std::uint64_t>(l)));
    }
    gradients_.assign(params_.size(), 0.0F);
    return;
  }
  const auto w = static_cast<std::size_t>(shape.width);
  const auto l = static_cast<std::size_t>(shape.layers);
  // Weights uniform in +-sqrt(3 / width) (unit variance through a linear layer), biases 0.
  params_ = uniform(l * w * w, mix(seed, 1, static_cast<std::uint64_t>(stage), 0),
                    std::sqrt(3.0 / static_cast<double>(w)));
  params_.resize(l * w * w + l * w, 0.0F);
  gradients_.assign(params_.size(), 0.0F);
}

std::size_t StageParams::block_offset(std::int32_t layer) const noexcept {
  return static_cast<std::size_t>(layer) * transformer::layer_parameters(transformer_dims(shape_));
}

std::vector<float> StageParams::forward(const std::vector<float>& input, Chunk& chunk) const {
  CpuOps ops;
  chunk.saved.clear();
  chunk.grads.clear();
  return with_stage_layers(ops, shape_, [&](auto& layers) {
    return layers.forward(params_.data(), input, chunk.saved);
  });
}

std::vector<float> StageParams::backward_input(const std::vector<float>& output_gradient,
                                               Chunk& chunk) const {
  CpuOps ops;
  return with_stage_layers(ops, shape_, [&](auto& layers) {
    return layers.backward_input(params_.data(), chunk.saved, output_gradient, chunk.grads);
  });
}

void StageParams::backward_weight(const Chunk& chunk) {
  CpuOps ops;
  with_stage_layers(ops, shape_, [&](auto& layers) {
    layers.backward_weight(chunk.saved, chunk.grads, gradients_.data());
  });
}

double StageParams::loss(const std::vector<float>& output, const std::vector<float>& target,
                         std::vector<float>& gradient) {
  gradient.resize(output.size());
  const double n = static_cast<double>(output.size());
  double sum = 0;
  for (std::size_t i = 0; i < output.size(); ++i) {
    const double d = static_cast<double>(output[i]) - static_cast<double>(target[i]);
    sum += d * d;
    gradient[i] = static_cast<float>(d / n);
  }
  return 0.5 * sum / n;
}

void StageParams::step(double learning_rate, std::int64_t microbatches) {
  const double scale = learning_rate / static_cast<double>(microbatches);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    params_[i] -= static_cast<float>(scale * static_cast<double>(gradients_[i]));
    gradients_[i] = 0.0F;
  }
}

namespace {

/// `kind` 2: inputs, 3: targets; each iteration has its own pair of streams.
std::vector<float> synthetic(const StageShape& shape, std::uint64_t seed, std::uint64_t kind,
                             std::int64_t iteration, std::int32_t owner, std::int32_t microbatch,
                             double scale) {
  return uniform(static_cast<std::size_t>(shape.rows()) * static_cast<std::size_t>(shape.width),
                 mix(seed, kind + 2 * static_cast<std::uint64_t>(iteration),
                     static_cast<std::uint64_t>(owner), static_cast<std::uint64_t>(microbatch)),
                 scale);
}

}  // namespace

std::vector<float> synthetic_input(const StageShape& shape, std::uint64_t seed,
                                   std::int64_t iteration, std::int32_t owner,
                                   std::int32_t microbatch) {
  return synthetic(shape, seed, 2, iteration, owner, microbatch, 1.0);
}

std::vector<float> synthetic_target(const StageShape& shape, std::uint64_t seed,
                                    std::int64_t iteration, std::int32_t owner,
                                    std::int32_t microbatch) {
  return synthetic(shape, seed, 3, iteration, owner, microbatch, 0.5);
}

}  // namespace recycle::executor
