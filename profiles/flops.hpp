// Floating-point operations of a decoder-only transformer (profiles/model_spec.hpp): what the
// synthesizer divides by a GPU's achieved rate. Matrix products only (2 operations per
// multiply-add), as Narayanan et al. (SC '21, section 5.1) count them: element-wise work (norms,
// softmax, activations) is memory-bound and timed from bytes, not FLOPs. Attention scores count
// the full s x s product, causal mask or not, as that paper does.
#pragma once

#include <cstdint>

#include "profiles/model_spec.hpp"

namespace recycle::profiles {

/// Which activations the backward recomputes (Korthikanti et al., MLSys '23): none; selective
/// (the attention core: scores, softmax, attention over values); full (the whole layer forward).
enum class Recompute : std::uint8_t { kNone, kSelective, kFull };

/// Forward FLOPs of one transformer layer for one sample of `sequence_length` tokens.
[[nodiscard]] std::int64_t layer_forward_flops(const ModelSpec& model) noexcept;
/// Of which the attention core (scores and attention over values), the part selective
/// recomputation runs again.
[[nodiscard]] std::int64_t attention_core_flops(const ModelSpec& model) noexcept;
/// Forward FLOPs of the output layer (logits) for one sample.
[[nodiscard]] std::int64_t logit_forward_flops(const ModelSpec& model) noexcept;

/// FLOPs of one training step over `samples` samples: forward, backward (twice the forward:
/// input and weight gradients) and the recomputation, layers and output layer.
[[nodiscard]] std::int64_t training_flops(const ModelSpec& model, std::int64_t samples,
                                          Recompute recompute) noexcept;

}  // namespace recycle::profiles
