#include "profiles/activations.hpp"

namespace recycle::profiles {

Bytes layer_activation_bytes(const ModelSpec& m, const ActivationOptions& o) noexcept {
  const std::int64_t sb = m.sequence_length * o.microbatch_size;
  const std::int64_t h = m.hidden;
  const std::int64_t q = m.heads * m.head_dim;
  const std::int64_t kv = m.kv_heads * m.head_dim;
  const std::int64_t f = m.ffn_hidden;
  const std::int64_t t = o.tensor_parallel;
  const std::int64_t mask = m.dropout ? 1 : 0;

  if (o.recompute == Recompute::kFull) {
    // Only the layer's input, split along the sequence when sequence-parallel.
    return o.sequence_parallel ? 2 * sb * h / t : 2 * sb * h;
  }
  // Outside the tensor-parallel region: norms' inputs, the two projections' inputs, masks.
  const std::int64_t outside = sb * (2 * 2 * h + 2 * h + 2 * h + 2 * mask * h);
  // Inside it: Q, K, V, the output projection's input, the MLP's activations.
  const std::int64_t inside =
      sb * (2 * q + 4 * kv + 2 * q + (m.gated_mlp ? 4 * f + 2 * f : 2 * f + 2 * f));
  // The attention core: softmax output, and with dropout its mask and output.
  const bool core_kept = o.recompute == Recompute::kNone && !o.flash_attention;
  const std::int64_t core = core_kept ? m.heads * m.sequence_length * sb * (2 + 3 * mask) : 0;
  if (o.sequence_parallel) return (outside + inside + core) / t;
  return outside + (inside + core) / t;
}

}  // namespace recycle::profiles
