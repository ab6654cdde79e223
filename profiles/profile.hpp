// Profiles: what one micro-batch costs on each pipeline stage, and the hardware it was made for.
//
// Concepts:
//  - StageProfile: per stage and micro-batch, the time of F, I (input gradient) and W (weight
//    gradient), the optimizer step per iteration, and the bytes it holds and sends.
//  - HardwareSpec: GPUs per node, memory, bandwidth and latency inside a node and between nodes.
//  - Profile: the stages of one model split into a pipeline, on one kind of hardware.
// File format "recycle.profile/1" (docs/formats.md); sources: hand-written JSON, the analytic
// synthesizer, or the executor's measurements.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/units.hpp"

namespace recycle::profiles {

/// The largest byte counts a profile may hold, so that every sum a worker makes of them fits 64
/// bits: a micro-batch's activations or output on a stage, 2^39 (550 GB; a worker holds at most
/// 2^23 chunks at once, planner/language/work_limits.hpp); a stage's weights or optimizer state,
/// 2^50; one GPU's memory, 2^50 (a worker has at most 1024 GPUs).
inline constexpr Bytes kMaxMicrobatchBytes = Bytes{1} << 39;
inline constexpr Bytes kMaxStageBytes = Bytes{1} << 50;
inline constexpr Bytes kMaxGpuMemoryBytes = Bytes{1} << 50;

struct StageProfile {
  Nanos forward = 0;
  Nanos backward_input = 0;
  Nanos backward_weight = 0;
  Nanos optimizer = 0;         ///< per iteration
  Bytes activation_bytes = 0;  ///< held from F until W, per micro-batch
  Bytes output_bytes = 0;      ///< sent to the next stage (and the gradient back), per micro-batch
  Bytes param_bytes = 0;       ///< weights (and so weight gradients) of the stage
  Bytes optimizer_state_bytes = 0;
};

struct HardwareSpec {
  std::int32_t gpus_per_node = 8;
  BytesPerSecond intra_node_bandwidth = 0;
  BytesPerSecond inter_node_bandwidth = 0;
  Nanos intra_node_latency = 0;
  Nanos inter_node_latency = 0;
  Bytes memory_bytes = 0;  ///< per GPU
  /// The bus bandwidth (nccl-tests' busbw) of a gradient all-reduce when it is measured apart
  /// from the links; 0: not given, a ring over the links' bandwidth (planner/timing/cluster.hpp).
  BytesPerSecond all_reduce_bus_bandwidth = 0;
};

struct Profile {
  std::string name;
  std::int32_t tensor_parallel = 1;  ///< GPUs per worker
  std::vector<StageProfile> stages;
  HardwareSpec hardware;
  /// The loss of one micro-batch and its gradient, computed by the last virtual stage at the
  /// start of its I: charged to that virtual stage alone (planner/timing/profile_costs.hpp), not
  /// split over a stage's chunks. Measured profiles time it; 0 where the stages' costs include it.
  Nanos loss = 0;
  /// The data-parallel ranks each stage's optimizer state is split over (the distributed
  /// optimizer): a stage's optimizer_state_bytes is one rank's shard. 1: every rank holds it all.
  std::int32_t optimizer_shards = 1;
  /// Copies of each shard: 1, or 2 (a replica on the next rank of the stage, so that a failed
  /// rank's shard survives).
  std::int32_t optimizer_shard_copies = 1;

  /// The memory of one worker: its tensor-parallel group's GPUs together; 0: not given.
  [[nodiscard]] Bytes worker_memory() const noexcept {
    return hardware.memory_bytes * tensor_parallel;
  }
};

[[nodiscard]] Profile profile_from_json(const nlohmann::json& json, const std::string& source);
[[nodiscard]] Profile load_profile(const std::string& path);
[[nodiscard]] nlohmann::json to_json(const Profile& profile);

}  // namespace recycle::profiles
