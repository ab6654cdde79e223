#include "profiles/model_spec.hpp"

#include <nlohmann/json.hpp>

#include "core/json.hpp"

namespace recycle::profiles {

namespace {

constexpr std::int64_t kMaxDimension = 1'000'000;
constexpr std::int64_t kMaxLayers = 10'000;

std::int64_t read_dimension(const JsonView& root, std::string_view key,
                            std::int64_t max = kMaxDimension) {
  return root.at(key).as_int(1, max);
}

bool read_flag(const JsonView& root, std::string_view key) {
  const auto v = root.find(key);
  return v && v->as_bool();
}

}  // namespace

std::int64_t ModelSpec::layer_parameters() const noexcept {
  const std::int64_t q = heads * head_dim;
  const std::int64_t kv = kv_heads * head_dim;
  // Query, key and value projections, then the output projection back to hidden.
  std::int64_t p = hidden * (q + 2 * kv) + q * hidden;
  if (bias) p += q + 2 * kv + hidden;
  // MLP: up (and gate) to ffn_hidden, down to hidden.
  p += (gated_mlp ? 3 : 2) * hidden * ffn_hidden;
  if (bias) p += (gated_mlp ? 2 : 1) * ffn_hidden + hidden;
  // Two norms.
  p += 2 * (norm == Norm::kLayerNorm ? 2 : 1) * hidden;
  return p;
}

std::int64_t ModelSpec::embedding_parameters() const noexcept {
  std::int64_t p = vocab_size * hidden;
  if (learned_positions) p += sequence_length * hidden;
  if (!tied_embeddings) p += vocab_size * hidden;
  p += (norm == Norm::kLayerNorm ? 2 : 1) * hidden;  // the final norm
  return p;
}

std::int64_t ModelSpec::parameters() const noexcept {
  return layers * layer_parameters() + embedding_parameters();
}

ModelSpec model_from_json(const nlohmann::json& json, const std::string& source) {
  const JsonView root(json, source);
  root.only_keys({"format", "name", "source", "layers", "hidden", "heads", "kv_heads", "head_dim",
                  "ffn_hidden", "sequence_length", "vocab_size", "gated_mlp", "tied_embeddings",
                  "bias", "learned_positions", "norm", "dropout"});
  if (const auto format = root.find("format")) format->check_format("recycle.model/1");
  ModelSpec m;
  if (const auto name = root.find("name")) m.name = name->as_string();
  if (const auto cited = root.find("source")) (void)cited->as_string();
  m.layers = read_dimension(root, "layers", kMaxLayers);
  m.hidden = read_dimension(root, "hidden");
  m.heads = read_dimension(root, "heads");
  m.ffn_hidden = read_dimension(root, "ffn_hidden");
  m.sequence_length = read_dimension(root, "sequence_length");
  m.vocab_size = read_dimension(root, "vocab_size", 100'000'000);
  if (const auto d = root.find("head_dim")) {
    m.head_dim = d->as_int(1, kMaxDimension);
  } else {
    if (m.hidden % m.heads != 0) {
      root.at("heads").fail("expected a divisor of hidden (" + std::to_string(m.hidden) +
                            "), or give head_dim");
    }
    m.head_dim = m.hidden / m.heads;
  }
  m.kv_heads = m.heads;
  if (const auto kv = root.find("kv_heads")) {
    m.kv_heads = kv->as_int(1, m.heads);
    if (m.heads % m.kv_heads != 0)
      kv->fail("expected a divisor of heads (" + std::to_string(m.heads) + ")");
  }
  m.gated_mlp = read_flag(root, "gated_mlp");
  m.tied_embeddings = read_flag(root, "tied_embeddings");
  m.bias = read_flag(root, "bias");
  m.learned_positions = read_flag(root, "learned_positions");
  m.dropout = read_flag(root, "dropout");
  if (const auto norm = root.find("norm")) {
    m.norm = norm->as_choice({"layernorm", "rmsnorm"}) == 0 ? Norm::kLayerNorm : Norm::kRmsNorm;
  }
  return m;
}

ModelSpec load_model(const std::string& path) {
  return model_from_json(load_json(path), path);
}

}  // namespace recycle::profiles
