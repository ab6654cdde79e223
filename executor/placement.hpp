// Where the cuda backend puts a run's workers on a machine's GPUs, decided before anything runs:
// one worker per GPU when there are enough GPUs, all of them on one GPU when the machine has one
// (the common development box: their streams share the device, their transfers are device
// copies, and the simulator is told that they share it), else the run is refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace recycle::executor {

/// Most replicas of one stage that can share a GPU: the device all-reduce sums them in one pass.
inline constexpr std::int32_t kMaxSharedReplicas = 64;

struct GpuPlacement {
  std::vector<int> device;  ///< by worker, in the order of the run's first schedule
  bool shared = false;      ///< several workers on one GPU
};

/// Places `workers` live workers, the largest number of replicas of a stage being `replicas`, on
/// `gpus` GPUs (`why_none`: why the driver sees none, when it said so). Throws InputError naming
/// --backend when they cannot be placed: no GPU, more workers than GPUs but more than one GPU,
/// more than kMaxSharedReplicas replicas sharing one GPU.
[[nodiscard]] GpuPlacement place_on_gpus(std::size_t workers, std::int32_t replicas, int gpus,
                                         const std::string& why_none = "");

}  // namespace recycle::executor
