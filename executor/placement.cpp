#include "executor/placement.hpp"

#include "core/error.hpp"

namespace recycle::executor {

GpuPlacement place_on_gpus(std::size_t workers, std::int32_t replicas, int gpus,
                           const std::string& why_none) {
  const std::string flag = "--backend cuda";
  if (gpus <= 0)
    throw InputError(flag, "no GPU is visible" + (why_none.empty() ? "" : " (" + why_none + ")"));
  GpuPlacement placement;
  if (workers <= static_cast<std::size_t>(gpus)) {
    for (std::size_t i = 0; i < workers; ++i) placement.device.push_back(static_cast<int>(i));
    return placement;
  }
  if (gpus > 1) {
    throw InputError(flag, std::to_string(workers) + " live workers need a GPU each, or one GPU " +
                               "between them; this machine has " + std::to_string(gpus) +
                               " (CUDA_VISIBLE_DEVICES can show one)");
  }
  if (replicas > kMaxSharedReplicas) {
    throw InputError(flag, std::to_string(replicas) + " replicas of a stage on one GPU: at most " +
                               std::to_string(kMaxSharedReplicas) + " can share it");
  }
  placement.device.assign(workers, 0);
  placement.shared = workers > 1;
  return placement;
}

}  // namespace recycle::executor
