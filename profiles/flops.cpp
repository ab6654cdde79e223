#include "profiles/flops.hpp"

namespace recycle::profiles {

std::int64_t layer_forward_flops(const ModelSpec& m) noexcept {
  const std::int64_t s = m.sequence_length;
  const std::int64_t q = m.heads * m.head_dim;
  const std::int64_t kv = m.kv_heads * m.head_dim;
  const std::int64_t projections = 2 * s * m.hidden * (q + 2 * kv) + 2 * s * q * m.hidden;
  const std::int64_t mlp = 2 * s * (m.gated_mlp ? 3 : 2) * m.hidden * m.ffn_hidden;
  return projections + attention_core_flops(m) + mlp;
}

std::int64_t attention_core_flops(const ModelSpec& m) noexcept {
  // Q K^T and softmax(Q K^T) V: each 2 s^2 x head_dim per head.
  return 2 * 2 * m.sequence_length * m.sequence_length * m.heads * m.head_dim;
}

std::int64_t logit_forward_flops(const ModelSpec& m) noexcept {
  return 2 * m.sequence_length * m.hidden * m.vocab_size;
}

std::int64_t training_flops(const ModelSpec& m, std::int64_t samples,
                            Recompute recompute) noexcept {
  std::int64_t layer = 3 * layer_forward_flops(m);  // forward, input and weight gradients
  if (recompute == Recompute::kFull) layer += layer_forward_flops(m);
  if (recompute == Recompute::kSelective) layer += attention_core_flops(m);
  return samples * (m.layers * layer + 3 * logit_forward_flops(m));
}

}  // namespace recycle::profiles
