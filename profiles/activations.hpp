// Activation memory of a transformer layer: the bytes one micro-batch keeps from its forward
// until its backward, after Korthikanti et al., "Reducing Activation Recomputation in Large
// Transformer Models" (MLSys '23, section 4), generalized to grouped-query attention, gated MLPs
// and models trained without dropout. 16-bit activations, 1-byte dropout masks.
//
// What one layer keeps (s tokens, b samples, h hidden, q = heads x head_dim, kv = kv_heads x
// head_dim, f ffn_hidden, a heads):
//  - two norms' inputs, 2sbh each;
//  - attention: the QKV projection's input 2sbh; Q, K, V (2sbq + 4sbkv); the softmax output
//    2as^2b, and with dropout its mask as^2b and its output 2as^2b; the output projection's input
//    2sbq; with dropout the block's mask sbh;
//  - MLP: the first projection's input 2sbh; the activation's input 2sbf (gated: the gate's and
//    the up projection's outputs 4sbf), the second projection's input 2sbf; with dropout a mask
//    sbh.
// For GPT (q = kv = h, f = 4h, dropout) that is Korthikanti et al.'s 34sbh + 5as^2b.
// Tensor parallelism t divides what lies inside the tensor-parallel region; the norms, the two
// projections' inputs and the dropout masks stay whole unless sequence parallelism splits them
// too. Selective recomputation keeps nothing of the attention core (the s^2 terms); full
// recomputation keeps only the layer's input. Flash attention keeps no s^2 terms either (it
// recomputes the scores from Q, K, V).
#pragma once

#include <cstdint>

#include "core/units.hpp"
#include "profiles/flops.hpp"
#include "profiles/model_spec.hpp"

namespace recycle::profiles {

struct ActivationOptions {
  std::int64_t microbatch_size = 1;  ///< samples per micro-batch
  std::int64_t tensor_parallel = 1;  ///< t
  bool sequence_parallel = false;
  Recompute recompute = Recompute::kNone;
  bool flash_attention = false;
};

/// Bytes one layer keeps for one micro-batch, per GPU of its tensor-parallel group.
[[nodiscard]] Bytes layer_activation_bytes(const ModelSpec& model,
                                           const ActivationOptions& options) noexcept;

}  // namespace recycle::profiles
