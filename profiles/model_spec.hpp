// Model specs: the shape of a decoder-only transformer, from which the synthesizer derives what a
// micro-batch costs. File format "recycle.model/1" (docs/profiles.md); the shipped specs are in
// profiles/models/ (GPT-3 family, Llama 2 and 3).
//
// Concepts:
//  - Layer: attention (query, key and value projections, kv_heads x head_dim wide for keys and
//    values under grouped-query attention; an output projection) and an MLP (two matrices, or
//    three with a gated MLP such as SwiGLU), each preceded by a norm.
//  - Embeddings: the token embedding (vocab_size x hidden), learned position embeddings when the
//    model has them (sequence_length x hidden; rotary positions have no parameters), and the
//    output layer, which shares the token embedding's weights when tied.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace recycle::profiles {

enum class Norm : std::uint8_t { kLayerNorm, kRmsNorm };

struct ModelSpec {
  std::string name;
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;  ///< key/value heads (grouped-query attention); = heads by default
  std::int64_t head_dim = 0;  ///< = hidden / heads by default
  std::int64_t ffn_hidden = 0;
  std::int64_t sequence_length = 0;
  std::int64_t vocab_size = 0;
  bool gated_mlp = false;          ///< three MLP matrices (SwiGLU) instead of two
  bool tied_embeddings = false;    ///< the output layer reuses the token embedding
  bool bias = false;               ///< linear layers have biases (GPT) or not (Llama)
  bool learned_positions = false;  ///< learned position embeddings (GPT) or rotary (Llama)
  Norm norm = Norm::kLayerNorm;    ///< LayerNorm (gain and bias) or RMSNorm (gain)
  bool dropout = false;            ///< trained with dropout (GPT-3) or without (Llama)

  /// Parameters of one transformer layer.
  [[nodiscard]] std::int64_t layer_parameters() const noexcept;
  /// Parameters outside the layers: embeddings, the output layer when untied, the final norm.
  [[nodiscard]] std::int64_t embedding_parameters() const noexcept;
  /// All parameters.
  [[nodiscard]] std::int64_t parameters() const noexcept;
};

/// InputError naming `source` and the field for a missing, mistyped, out-of-range or unknown
/// field, or shapes that do not fit together (heads not dividing hidden without head_dim, kv_heads
/// not dividing heads).
[[nodiscard]] ModelSpec model_from_json(const nlohmann::json& json, const std::string& source);
[[nodiscard]] ModelSpec load_model(const std::string& path);

}  // namespace recycle::profiles
