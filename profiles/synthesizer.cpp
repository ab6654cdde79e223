#include "profiles/synthesizer.hpp"

#include <algorithm>
#include <cstdio>

#include "core/error.hpp"
#include "profiles/activations.hpp"
#include "profiles/link.hpp"

namespace recycle::profiles {

namespace {

/// Bytes per parameter of the optimizer's own state: an fp32 master copy and Adam's two moments
/// with 16-bit weights (mixed precision, Rajbhandari et al.'s K = 12), the moments alone in fp32.
std::int64_t optimizer_bytes_per_parameter(DType dtype) {
  return element_bytes(dtype) == 2 ? 12 : 8;
}

/// Bytes an Adam step moves per parameter: reads the gradient, the master weight and both moments,
/// writes the master weight, both moments and the 16-bit weight.
std::int64_t adam_traffic_per_parameter(DType dtype) {
  const std::int64_t e = element_bytes(dtype);
  return e == 2 ? e + 3 * 4 + 3 * 4 + e : 4 * 4 + 3 * 4;
}

struct Phases {
  double f = 0;  ///< forward
  double i = 0;  ///< input gradient (with recomputation)
  double w = 0;  ///< weight gradient

  Phases& operator+=(const Phases& o) {
    f += o.f;
    i += o.i;
    w += o.w;
    return *this;
  }
};

/// Costs of one micro-batch on one GPU of a tensor-parallel group.
class CostOf {
 public:
  CostOf(const ModelSpec& m, const GpuSpec& g, const ParallelConfig& p)
      : m_(m), g_(g), p_(p), e_(static_cast<double>(element_bytes(p.dtype))) {
    tokens_ = m.sequence_length * p.microbatch_size;
    outside_ = p.sequence_parallel ? static_cast<double>(tokens_) / p.tp : tokens_;
    nvlink_ = Link{g.intra_node_bandwidth * g.efficiency.nvlink, to_nanos(g.intra_node_latency)};
  }

  /// One transformer layer.
  [[nodiscard]] Phases layer() const {
    const std::int64_t t = p_.tp, T = tokens_, h = m_.hidden, d = m_.head_dim;
    const std::int64_t q = m_.heads / t * d, kv = m_.kv_heads / t * d;
    const std::int64_t f = m_.ffn_hidden / t, up = (m_.gated_mlp ? 2 : 1) * f;
    Phases c;
    // The four weight products: forward (T x k by k x n), input gradient (T x n by n x k), weight
    // gradient (k x T by T x n).
    for (const auto& [n, k] : {std::pair{q + 2 * kv, h}, {h, q}, {up, h}, {h, f}}) {
      c.f += mm(T, n, k);
      c.i += mm(T, k, n);
      c.w += mm(k, n, T);
    }
    const Phases core = attention_core();
    c += core;
    // Element-wise kernels; their backward reads the saved input and the incoming gradient and
    // writes the gradient: twice the forward's bytes.
    const double mask = m_.dropout ? 1 : 0;
    double bytes = 2 * (2 * e_) * outside_ * h;                 // two norms: read, write
    bytes += 2 * (3 * e_ + mask) * outside_ * h;                // two residual adds (+ dropout)
    bytes += (m_.gated_mlp ? 3 : 2) * e_ * T * f;               // GELU, or SwiGLU's gate x up
    if (!m_.learned_positions) bytes += 2 * e_ * T * (q + kv);  // rotary on queries and keys
    c.f += g_.memory_time(bytes);
    c.i += 2 * g_.memory_time(bytes);
    c.f += layer_collectives();
    c.i += layer_collectives();
    // Recomputation runs before the input gradient.
    if (p_.recompute == Recompute::kFull) c.i += c.f;
    if (p_.recompute == Recompute::kSelective && !p_.flash_attention) c.i += core.f;
    return c;
  }

  /// A layer's tensor-parallel collectives in its F, and again in its I: two per pass
  /// (all-reduces, or reduce-scatter + all-gather pairs under sequence parallelism: the same
  /// bytes), none for the weight gradient.
  [[nodiscard]] double layer_collectives() const { return 2 * hidden_all_reduce(); }

  /// The token (and position) embedding, on the first virtual stage.
  [[nodiscard]] Phases embedding() const {
    const double h = static_cast<double>(m_.hidden), T = static_cast<double>(tokens_);
    Phases c;
    double bytes = 2 * e_ * T * h;                      // gather rows, write
    if (m_.learned_positions) bytes += 3 * e_ * T * h;  // add positions
    if (m_.dropout) bytes += (2 * e_ + 1) * T * h;      // dropout
    c.f = g_.memory_time(bytes);
    // Vocabulary-parallel embedding: partial rows summed over the group (reduce-scatter alone
    // under sequence parallelism: half an all-reduce).
    c.f += (p_.sequence_parallel ? 0.5 : 1.0) * hidden_all_reduce();
    c.w = g_.memory_time(2 * e_ * T * h);  // gradient rows added into the table
    return c;
  }

  /// The final norm, output layer and cross-entropy loss, on the last virtual stage.
  [[nodiscard]] Phases output() const {
    const std::int64_t T = tokens_, h = m_.hidden;
    const std::int64_t v = (m_.vocab_size + p_.tp - 1) / p_.tp;
    Phases c;
    c.f = g_.memory_time(2 * e_ * outside_ * h) + mm(T, v, h);
    c.i = 2 * g_.memory_time(2 * e_ * outside_ * h) + mm(T, h, v);
    c.w = mm(h, v, T);
    // Cross-entropy in fp32 over the vocabulary shard: read the logits, write and read the
    // exponentials; the backward reads them and writes the logits' gradient.
    const double logits = static_cast<double>(T) * static_cast<double>(v);
    c.f += g_.memory_time((e_ + 8) * logits);
    c.i += g_.memory_time((4 + e_) * logits);
    // The output layer's input is whole on every GPU: gathered first under sequence parallelism,
    // its gradient all-reduced (or reduce-scattered) after.
    const double collective = hidden_all_reduce();
    if (p_.sequence_parallel) c.f += 0.5 * collective;
    c.i += p_.sequence_parallel ? 0.5 * collective : collective;
    return c;
  }

  /// One rank's optimizer step for a stage of `parameters` parameters held by the whole group:
  /// Adam over them all, or over its shard (and its replica of the next rank's) under the
  /// distributed optimizer, where a replica also needs that shard's reduced gradient, sent by its
  /// owner over the network.
  [[nodiscard]] double optimizer(std::int64_t parameters) const {
    const double per_gpu = static_cast<double>(parameters) / p_.tp;
    if (!p_.distributed_optimizer) {
      return g_.memory_time(per_gpu * static_cast<double>(adam_traffic_per_parameter(p_.dtype)));
    }
    const double shard = per_gpu / p_.dp;
    double seconds = g_.memory_time(shard * p_.shard_copies *
                                    static_cast<double>(adam_traffic_per_parameter(p_.dtype)));
    if (p_.shard_copies > 1) {
      const Link network{g_.inter_node_bandwidth * g_.efficiency.network,
                         to_nanos(g_.inter_node_latency)};
      seconds += to_seconds(network.transfer_time(static_cast<Bytes>(shard * e_)));
    }
    return seconds;
  }

 private:
  [[nodiscard]] double mm(std::int64_t m, std::int64_t n, std::int64_t k,
                          std::int64_t batch = 1) const {
    return g_.matmul_time(m, n, k, batch, p_.dtype);
  }

  /// Scores (Q K^T) and attention over values, and the softmax and dropout between them.
  [[nodiscard]] Phases attention_core() const {
    const std::int64_t s = m_.sequence_length, d = m_.head_dim;
    const std::int64_t batch = p_.microbatch_size * (m_.heads / p_.tp);
    const double products = mm(s, s, d, batch) + mm(s, d, s, batch);
    Phases c;
    if (p_.flash_attention) {
      // One fused kernel that skips the blocks a causal mask hides (half the s x s products);
      // its backward recomputes the scores: five products for the forward's two.
      c.f = 0.5 * products;
      c.i = 2.5 * c.f;
      return c;
    }
    const double elements = static_cast<double>(batch) * static_cast<double>(s * s);
    const double dropout = m_.dropout ? 2 * e_ + 1 : 0;
    c.f = products + g_.memory_time((2 * e_ + dropout) * elements);
    // Backward: two products per forward product; softmax reads its output and gradient and
    // writes the scores' gradient, dropout reads the gradient and mask and writes.
    c.i = 2 * products + g_.memory_time((3 * e_ + dropout) * elements);
    return c;
  }

  /// A ring all-reduce of one micro-batch's hidden states (tokens x hidden) over the tp GPUs.
  [[nodiscard]] double hidden_all_reduce() const {
    const double bytes = static_cast<double>(tokens_) * static_cast<double>(m_.hidden) * e_;
    return to_seconds(ring_all_reduce_time(p_.tp, static_cast<Bytes>(bytes), nvlink_));
  }

  const ModelSpec& m_;
  const GpuSpec& g_;
  const ParallelConfig& p_;
  double e_;
  std::int64_t tokens_ = 0;
  double outside_ = 0;  ///< tokens each GPU handles outside the tensor-parallel region
  Link nvlink_;
};

void check(const ModelSpec& m, const GpuSpec& g, const ParallelConfig& p,
           const std::string& source) {
  const auto fail = [&](const std::string& field, const std::string& problem) {
    throw InputError(source + ": " + field, problem);
  };
  if (p.tp > g.gpus_per_node) {
    fail("parallel.tp", "expected at most the GPUs of one node (" +
                            std::to_string(g.gpus_per_node) + " on " + g.name +
                            "): tensor parallelism stays on NVLink");
  }
  const auto divides = [&](std::int64_t what, const char* name) {
    if (what % p.tp != 0) {
      fail("parallel.tp", "expected a divisor of the model's " + std::string(name) + " (" +
                              std::to_string(what) + "), got " + std::to_string(p.tp));
    }
  };
  divides(m.heads, "heads");
  divides(m.kv_heads, "kv_heads");
  divides(m.ffn_hidden, "ffn_hidden");
  if (static_cast<std::int64_t>(p.pp) * p.interleave > m.layers) {
    fail("parallel.pp", "pp x interleave (" + std::to_string(p.pp * p.interleave) +
                            ") exceeds the model's " + std::to_string(m.layers) + " layers");
  }
  const std::int64_t per_step = static_cast<std::int64_t>(p.dp) * p.microbatch_size;
  if (p.global_batch % per_step != 0) {
    fail("parallel.global_batch", "expected a multiple of dp x microbatch_size (" +
                                      std::to_string(per_step) + "), got " +
                                      std::to_string(p.global_batch));
  }
  // Every count below is a 64-bit integer (bytes, FLOPs per sample) or nanoseconds: refuse what
  // would not fit before computing it, by the largest products in floating point.
  const double tokens =
      static_cast<double>(m.sequence_length) * static_cast<double>(p.microbatch_size);
  const double widest =
      static_cast<double>(std::max({m.hidden, m.ffn_hidden, m.vocab_size, m.heads * m.head_dim}));
  const double largest =
      std::max({tokens * widest * 16,
                static_cast<double>(m.heads) * tokens * static_cast<double>(m.sequence_length) * 8,
                static_cast<double>(m.layers) * widest * widest * 64});
  if (largest > 1e17) {
    char figure[32];
    std::snprintf(figure, sizeof figure, "%.3g", largest);
    fail("parallel.microbatch_size",
         std::string("the model and micro-batch are too large to "
                     "represent (") +
             figure + " bytes or FLOPs per micro-batch and layer; at most 1e17)");
  }
  if (p.shard_copies != 1 && p.shard_copies != 2) {
    fail("optimizer.lost_shard", "expected 1 or 2 copies of each optimizer shard");
  }
  if (p.shard_copies == 2 && (!p.distributed_optimizer || p.dp < 2)) {
    fail("optimizer.lost_shard",
         "\"replica\" keeps each optimizer shard on a second data-parallel rank: it needs the "
         "distributed optimizer and dp >= 2, got dp " +
             std::to_string(p.dp));
  }
  if (g.peak_flops(p.dtype) <= 0) {
    fail("parallel.dtype",
         std::string("the hardware lists no matrix FLOP/s for ") + to_string(p.dtype));
  }
}

}  // namespace

std::vector<std::int64_t> split_layers(std::int64_t layers, std::int32_t virtual_stages) {
  const auto v = static_cast<std::size_t>(virtual_stages);
  std::vector<std::int64_t> out(v, layers / virtual_stages);
  std::int64_t rest = layers % virtual_stages;
  std::vector<std::size_t> order;
  for (std::size_t k = 1; k + 1 < v; ++k) order.push_back(k);
  order.push_back(0);
  if (v > 1) order.push_back(v - 1);
  for (std::size_t k : order) {
    if (rest == 0) break;
    ++out[k];
    --rest;
  }
  return out;
}

Synthesis synthesize(const ModelSpec& m, const GpuSpec& g, const ParallelConfig& p,
                     const std::string& source, const std::vector<std::int32_t>& stage_of) {
  check(m, g, p, source);
  const CostOf cost(m, g, p);
  const Phases layer = cost.layer();
  const Phases embedding = cost.embedding();
  const Phases output = cost.output();

  ActivationOptions options;
  options.microbatch_size = p.microbatch_size;
  options.tensor_parallel = p.tp;
  options.sequence_parallel = p.sequence_parallel;
  options.recompute = p.recompute;
  options.flash_attention = p.flash_attention;
  const Bytes per_layer = layer_activation_bytes(m, options) * p.tp;  // all GPUs of the worker
  const std::int64_t e = element_bytes(p.dtype);
  const std::int64_t T = m.sequence_length * p.microbatch_size;
  const std::int64_t h = m.hidden;
  // Beyond the layers (Korthikanti et al., section 4.3): the embedding's dropout mask on the
  // first stage; the final norm's and the output layer's inputs and the fp32 logits on the last.
  const Bytes first_extra = m.dropout ? T * h : 0;
  const Bytes last_extra = 2 * e * T * h + 2 * e * T * h + 4 * T * m.vocab_size;

  Synthesis out;
  out.layer_forward = to_nanos(layer.f);
  out.layer_backward_input = to_nanos(layer.i);
  out.layer_backward_weight = to_nanos(layer.w);
  out.layer_tp_collectives = to_nanos(cost.layer_collectives());
  const std::int32_t virtual_stages = p.pp * p.interleave;
  out.layers = split_layers(m.layers, virtual_stages);
  Profile& profile = out.profile;
  profile.name = m.name + " on " + g.name;
  profile.tensor_parallel = p.tp;
  profile.hardware = g.network();
  // A worker's p2p transfers and gradient all-reduces are split over its tp GPUs' links
  // (Megatron-LM's scatter-gather of activations, one all-reduce per GPU's shard).
  profile.hardware.intra_node_bandwidth *= p.tp;
  profile.hardware.inter_node_bandwidth *= p.tp;
  profile.stages.resize(static_cast<std::size_t>(p.pp));
  RECYCLE_ASSERT(stage_of.empty() || stage_of.size() == static_cast<std::size_t>(virtual_stages),
                 "a stage for every virtual stage");
  for (std::int32_t v = 0; v < virtual_stages; ++v) {
    const std::int32_t stage = stage_of.empty() ? v % p.pp : stage_of[static_cast<std::size_t>(v)];
    StageProfile& s = profile.stages[static_cast<std::size_t>(stage)];
    const auto n = out.layers[static_cast<std::size_t>(v)];
    Phases c{layer.f * n, layer.i * n, layer.w * n};
    std::int64_t params = n * m.layer_parameters();
    Bytes held = n * per_layer;
    if (v == 0) {
      c += embedding;
      params += m.vocab_size * h + (m.learned_positions ? m.sequence_length * h : 0);
      held += first_extra;
    }
    if (v == virtual_stages - 1) {
      c += output;
      // The output layer: its own weights when untied, or the last stage's copy of the tied
      // embedding when the pipeline has more than one stage (Megatron-LM keeps one and sums the
      // two copies' gradients); and the final norm.
      if (!m.tied_embeddings || virtual_stages > 1) params += m.vocab_size * h;
      params += (m.norm == Norm::kLayerNorm ? 2 : 1) * h;
      held += last_extra;
    }
    if (c.f + c.i + c.w > 1e6) {
      throw InputError(source + ": parallel",
                       "one micro-batch takes more than 10^6 seconds on a stage: not a "
                       "configuration that trains");
    }
    s.forward += to_nanos(c.f);
    s.backward_input += to_nanos(c.i);
    s.backward_weight += to_nanos(c.w);
    s.activation_bytes += held;
    s.output_bytes = T * h * e;
    s.param_bytes += params * e;
    s.optimizer_state_bytes += params * optimizer_bytes_per_parameter(p.dtype);
  }
  for (StageProfile& s : profile.stages) {
    if (s.activation_bytes > kMaxMicrobatchBytes || s.output_bytes > kMaxMicrobatchBytes ||
        s.param_bytes > kMaxStageBytes || s.optimizer_state_bytes > kMaxStageBytes) {
      throw InputError(source + ": parallel",
                       "a stage holds more than 2^39 bytes (550 GB) of activations for one "
                       "micro-batch, or more than 2^50 bytes of weights or of optimizer state: "
                       "not a configuration that trains");
    }
    if (p.distributed_optimizer) {  // this rank's shard (and replica), rounded up
      const Bytes copies = s.optimizer_state_bytes * p.shard_copies;
      s.optimizer_state_bytes = (copies + p.dp - 1) / p.dp;
    }
    const double seconds = cost.optimizer(s.param_bytes / e);
    if (seconds > 1e6) {
      throw InputError(source + ": parallel",
                       "an optimizer step takes more than 10^6 seconds on a stage: not a "
                       "configuration that trains");
    }
    s.optimizer = to_nanos(seconds);
  }
  if (p.distributed_optimizer) {
    profile.optimizer_shards = p.dp;
    profile.optimizer_shard_copies = p.shard_copies;
  }
  // Per sample in integers (exact), per batch in floating point (a batch of a trillion-parameter
  // model passes 2^63).
  const auto batch = static_cast<double>(p.global_batch);
  out.model_flops = static_cast<double>(training_flops(m, 1, Recompute::kNone)) * batch;
  out.hardware_flops = static_cast<double>(training_flops(m, 1, p.recompute)) * batch;
  out.gpus = p.gpus();
  out.peak_flops = g.peak_flops(p.dtype);
  return out;
}

}  // namespace recycle::profiles
