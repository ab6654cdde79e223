#include "executor/placement.hpp"

#include <cblas.h>

#include <algorithm>
#include <charconv>

#include "core/error.hpp"

namespace recycle::executor {

namespace {

const std::string kFlag = "--backend cuda";

void require_a_gpu(int gpus, const std::string& why_none) {
  if (gpus <= 0)
    throw InputError(kFlag, "no GPU is visible" + (why_none.empty() ? "" : " (" + why_none + ")"));
}

}  // namespace

GpuPlacement place_on_gpus(std::size_t workers, std::int32_t replicas, int gpus,
                           const std::string& why_none) {
  const std::string& flag = kFlag;
  require_a_gpu(gpus, why_none);
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

GpuPlacement place_block_on_gpus(const std::vector<std::optional<std::size_t>>& slot,
                                 std::size_t block, int node_rank, int node_size, int gpus,
                                 const std::string& why_none) {
  require_a_gpu(gpus, why_none);
  const std::size_t slots = static_cast<std::size_t>(std::max(1, node_size)) * block;
  if (gpus > 1 && static_cast<std::size_t>(gpus) < slots) {
    throw InputError(kFlag, std::to_string(node_size) + " processes on this machine with " +
                                std::to_string(block) + " workers each need a GPU per worker (" +
                                std::to_string(slots) + "), or one GPU between them; it has " +
                                std::to_string(gpus) + " (CUDA_VISIBLE_DEVICES can show one)");
  }
  GpuPlacement placement;
  placement.shared = gpus == 1 && slots > 1;
  for (const std::optional<std::size_t>& s : slot) {
    if (!s) {
      placement.device.push_back(-1);
    } else {
      RECYCLE_ASSERT(*s < block, "a worker's slot outside its process's block");
      placement.device.push_back(
          placement.shared ? 0
                           : static_cast<int>(static_cast<std::size_t>(node_rank) * block + *s));
    }
  }
  return placement;
}

std::optional<std::int32_t> blas_max_threads(std::string_view config) {
  constexpr std::string_view key = "MAX_THREADS=";
  const std::size_t at = config.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view digits = config.substr(at + key.size());
  std::int32_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end == digits.data() || value < 1) return std::nullopt;
  return value;
}

std::int32_t cpu_worker_limit() {
  const char* config = openblas_get_config();
  return blas_max_threads(config == nullptr ? "" : config).value_or(50);
}

void require_cpu_placement(std::size_t workers) {
  const std::int32_t limit = cpu_worker_limit();
  if (workers > static_cast<std::size_t>(limit)) {
    throw InputError("--backend cpu", std::to_string(workers) +
                                          " live workers: the cpu backend runs at most " +
                                          std::to_string(limit) +
                                          ", the threads its OpenBLAS lets call it at once "
                                          "(MAX_THREADS)");
  }
}

}  // namespace recycle::executor
