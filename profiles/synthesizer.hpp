// The synthesizer: model spec + GPU spec + parallel configuration -> a profile (recycle.profile/1)
// of per-stage F, I and W seconds, optimizer seconds and bytes, from first principles
// (docs/profiles.md says every term).
//
// Concepts:
//  - ParallelConfig: tensor (tp), pipeline (pp, interleave chunks per worker) and data (dp)
//    parallelism, micro-batch and global batch, sequence parallelism, recomputation, attention
//    kernel and data type.
//  - Layer split: pp x interleave virtual stages; each gets layers / (pp x interleave) layers and
//    the remainder goes one each to the middle virtual stages first (the first one also embeds the
//    tokens, the last one computes the output layer and the loss), then to the first, then the
//    last.
//  - Optimizer: replicated on every data-parallel rank, or distributed (Megatron-LM's
//    --use-distributed-optimizer, ZeRO stage 1, Rajbhandari et al. SC '20): the fp32 master
//    weights and Adam's moments split over the dp ranks of a stage, each rank stepping its shard;
//    the gradients are reduce-scattered and the weights all-gathered, which move the bytes of one
//    ring all-reduce. With `shard_copies` 2 each rank also keeps and steps its neighbour's shard,
//    so a failed rank's shard survives (docs/profiles.md, docs/policies.md).
//  - Per layer and micro-batch, per GPU of the tensor-parallel group: matrix products timed by the
//    GPU's shape-dependent efficiency, element-wise kernels by bytes over HBM bandwidth, the
//    tensor-parallel collectives by the ring formula on NVLink. F is the forward; I the input
//    gradient (the backward of every product's input, the attention core, the element-wise
//    kernels, the collectives, and the recomputed forward); W the weight gradients.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profiles/flops.hpp"
#include "profiles/gpu_spec.hpp"
#include "profiles/model_spec.hpp"
#include "profiles/profile.hpp"

namespace recycle::profiles {

struct ParallelConfig {
  std::int32_t tp = 1;
  std::int32_t pp = 1;
  std::int32_t dp = 1;
  std::int32_t interleave = 1;
  std::int64_t microbatch_size = 1;
  std::int64_t global_batch = 1;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::kNone;
  bool flash_attention = true;
  DType dtype = DType::kBf16;
  /// The optimizer state sharded over the dp ranks of each stage (the job file's
  /// `"optimizer": {"distributed": true}`).
  bool distributed_optimizer = false;
  /// With the distributed optimizer: copies of each shard, 1, or 2 (its rank's and a replica on
  /// the next rank of the stage; `"lost_shard": "replica"`).
  std::int32_t shard_copies = 1;

  [[nodiscard]] std::int64_t microbatches() const noexcept {
    return global_batch / (static_cast<std::int64_t>(dp) * microbatch_size);
  }
  [[nodiscard]] std::int64_t gpus() const noexcept {
    return static_cast<std::int64_t>(tp) * pp * dp;
  }
};

struct Synthesis {
  Profile profile;
  std::vector<std::int64_t> layers;  ///< per virtual stage (pp x interleave)
  double model_flops = 0;            ///< per iteration, without recomputation (for MFU)
  double hardware_flops = 0;         ///< per iteration, with the recomputation the job does
  std::int64_t gpus = 0;             ///< tp x pp x dp
  double peak_flops = 0;             ///< one GPU's matrix peak in the job's data type
  /// One transformer layer's F, I and W for one micro-batch on one worker: the stages' costs
  /// without the embedding and the output layer.
  Nanos layer_forward = 0;
  Nanos layer_backward_input = 0;
  Nanos layer_backward_weight = 0;
  /// Of layer_forward, and again of layer_backward_input: the layer's tensor-parallel
  /// collectives (two ring all-reduces of its output over the tp GPUs; 0 with tp 1).
  Nanos layer_tp_collectives = 0;

  /// Model FLOPs utilization (Chowdhery et al., PaLM): model FLOPs per second over the peak of
  /// every GPU, for an iteration of `iteration` seconds.
  [[nodiscard]] double mfu(Seconds iteration) const noexcept {
    return model_flops / (iteration * static_cast<double>(gpus) * peak_flops);
  }
  /// FLOP/s per GPU in units of 10^12, counting the recomputed forward as Narayanan et al.
  /// (SC '21, eq. 3) count it.
  [[nodiscard]] double tflops_per_gpu(Seconds iteration) const noexcept {
    return hardware_flops / (iteration * static_cast<double>(gpus)) / 1e12;
  }
};

/// The profile of `model` on `gpu` split as `parallel` says. InputError naming `source` and the
/// field (`parallel.tp`, ...) when the configuration cannot run: tp above the GPUs of a node or
/// not dividing the heads, key/value heads or MLP width; fewer layers than virtual stages; a
/// global batch that dp x microbatch_size does not divide; a data type the GPU lacks; a replica of
/// each optimizer shard with dp 1.
/// `stage_of[v]` is the physical stage that runs virtual stage v (planner::Layout::stage_of, which
/// a V-shaped schedule folds back: its last chunk, with the output layer, on stage 0); empty: the
/// interleaved loop, v on v % pp. It has pp x interleave entries when given.
[[nodiscard]] Synthesis synthesize(const ModelSpec& model, const GpuSpec& gpu,
                                   const ParallelConfig& parallel, const std::string& source,
                                   const std::vector<std::int32_t>& stage_of = {});

/// Layers per virtual stage, as the layer split above says.
[[nodiscard]] std::vector<std::int64_t> split_layers(std::int64_t layers,
                                                     std::int32_t virtual_stages);

}  // namespace recycle::profiles
