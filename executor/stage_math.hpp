// The executor's workload: one pipeline stage as a stack of layers, dense layers by default or
// transformer blocks (executor/transformer_block.hpp), with the backward pass split as the
// schedules split it.
//
// Dense layer l maps a micro-batch x (rows = samples, `width` columns, row-major) to
// a = tanh(x W_l + b_l). For one micro-batch:
//  - F keeps every layer's input and output (the activations a worker holds from F until W);
//  - I takes the gradient of the stage output and returns the gradient of the stage input,
//    keeping each layer's pre-activation gradient dz for W;
//  - W accumulates dW_l += x_l^T dz_l and db_l += sum of dz_l's rows, then frees the chunk;
//  - B is I then W.
// A transformer block's F, I and W are described in executor/transformer_block.hpp; its
// micro-batch is `microbatch_size` sequences of `sequence` tokens, each row a token.
// The last stage's loss is 0.5 x the mean over its elements of (a - target)^2 per micro-batch;
// the optimizer step applies plain SGD to the mean over every micro-batch of the global batch
// (the accumulated sums divided by their count), so the update does not depend on which worker
// computed which micro-batch, nor in what order: the property ReCycle's re-routing relies on.
// Inputs and targets are a fixed function of (seed, iteration, owner, micro-batch).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "executor/transformer_block.hpp"

namespace recycle::executor {

enum class Block : std::uint8_t { kDense, kTransformer };

struct StageShape {
  std::int32_t width = 256;           ///< features per layer (input = output width)
  std::int32_t layers = 2;            ///< layers per stage
  std::int32_t microbatch_size = 32;  ///< samples per micro-batch
  Block block = Block::kDense;
  std::int32_t sequence = 32;  ///< transformer: tokens per sample
  std::int32_t heads = 4;      ///< transformer: attention heads (they divide width)
  /// Transformer: features per head; 0, a GPT layer's width / heads. Set with `ffn` for one
  /// tensor-parallel rank's share of a layer (heads / tp heads of the model's head_dim).
  std::int32_t head_dim = 0;
  std::int32_t ffn = 0;        ///< transformer: the MLP's inner width; 0, a GPT layer's 4 x width
  std::int32_t kv_heads = 0;   ///< transformer: key/value heads, dividing heads; 0, = heads
  transformer::Style style{};  ///< transformer: GPT's block (the default) or Llama's

  /// Rows of a micro-batch's activation: samples, or tokens for transformer blocks.
  [[nodiscard]] std::int32_t rows() const noexcept {
    return block == Block::kTransformer ? microbatch_size * sequence : microbatch_size;
  }
};

/// A transformer block's dimensions for `shape` (head_dim and ffn resolved).
[[nodiscard]] transformer::Dims transformer_dims(const StageShape& shape) noexcept;
/// Floats of one stage's parameters (and so of its gradients).
[[nodiscard]] std::size_t parameter_floats(const StageShape& shape) noexcept;
/// Floats one micro-batch keeps on a stage from its F until its W (what F saves and I adds),
/// input and output messages not included.
[[nodiscard]] std::size_t chunk_floats(const StageShape& shape) noexcept;
/// Floating-point operations of one micro-batch's F, I and W on one stage.
[[nodiscard]] double chunk_flops(const StageShape& shape) noexcept;
/// Floats one micro-batch's I holds on a stage besides what it keeps (its largest temporaries).
[[nodiscard]] std::size_t transient_floats(const StageShape& shape) noexcept;
/// "2 dense layers of width 256" or "2 transformer blocks of width 256, 4 heads, sequences of
/// 32", with the head size and MLP width when they are not width / heads and 4 x width, the
/// key/value heads when fewer than the heads, and the style when not GPT's ("Llama-style" for
/// kLlama, else the features it has).
[[nodiscard]] std::string describe_layers(const StageShape& shape);

/// The activations and gradients one micro-batch keeps on a stage between its F, I and W.
struct Chunk {
  /// From F, per layer: dense, its input x_l and output tanh(x_l W_l + b_l); transformer, what
  /// executor/transformer_block.hpp's forward saves.
  std::vector<std::vector<float>> saved;
  /// From I, per layer: dense, d loss / d (x_l W_l + b_l); transformer, what its I keeps for W.
  std::vector<std::vector<float>> grads;
};

/// One stage's parameters and accumulated gradients.
class StageParams {
 public:
  /// Deterministic initial weights for `stage` (the same on every replica of the stage).
  StageParams(const StageShape& shape, std::int32_t stage, std::uint64_t seed);

  [[nodiscard]] const StageShape& shape() const noexcept { return shape_; }
  [[nodiscard]] std::size_t activation_size() const noexcept {
    return static_cast<std::size_t>(shape_.rows()) * static_cast<std::size_t>(shape_.width);
  }

  /// F: the stage output for `input` (activation_size() floats); fills `chunk`.
  std::vector<float> forward(const std::vector<float>& input, Chunk& chunk) const;
  /// I: the gradient of the stage input from that of the stage output; keeps dz in `chunk`.
  std::vector<float> backward_input(const std::vector<float>& output_gradient, Chunk& chunk) const;
  /// W: accumulates the chunk's weight gradients (after its I).
  void backward_weight(const Chunk& chunk);

  /// The loss of one micro-batch at the last stage and its gradient w.r.t. the stage output.
  static double loss(const std::vector<float>& output, const std::vector<float>& target,
                     std::vector<float>& gradient);

  /// The accumulated gradients, flattened like the parameters (dense: every layer's weights,
  /// then every layer's biases; transformer: layer by layer, each as transformer_block.cpp lays
  /// it out): what an all-reduce sums over the stage's replicas.
  [[nodiscard]] std::vector<float>& gradients() noexcept { return gradients_; }
  /// SGD on the mean gradient over `microbatches` micro-batches, then zeroes the gradients.
  void step(double learning_rate, std::int64_t microbatches);

  /// Parameters flattened like gradients().
  [[nodiscard]] const std::vector<float>& parameters() const noexcept { return params_; }

 private:
  /// Transformer: where layer `layer`'s parameters start.
  [[nodiscard]] std::size_t block_offset(std::int32_t layer) const noexcept;

  StageShape shape_;
  std::vector<float> params_;
  std::vector<float> gradients_;
};

/// The first stage's input and the last stage's target for one micro-batch: uniform in [-1, 1],
/// a fixed function of its arguments.
[[nodiscard]] std::vector<float> synthetic_input(const StageShape& shape, std::uint64_t seed,
                                                 std::int64_t iteration, std::int32_t owner,
                                                 std::int32_t microbatch);
[[nodiscard]] std::vector<float> synthetic_target(const StageShape& shape, std::uint64_t seed,
                                                  std::int64_t iteration, std::int32_t owner,
                                                  std::int32_t microbatch);

}  // namespace recycle::executor
