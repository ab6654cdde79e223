// GPU specs: what one GPU of a kind computes, holds and moves, and how close real kernels come
// to its peaks. File format "recycle.hardware/1" (docs/profiles.md); the shipped specs are in
// profiles/hardware/ (A100 40 GB and 80 GB, H100 SXM, H200), each number with its source.
//
// Concepts:
//  - Peaks: dense matrix FLOP/s per data type, HBM capacity and bandwidth, NVLink and inter-node
//    bandwidth per GPU, message latencies.
//  - Efficiency: the fraction of a peak real kernels reach. A matrix product (m x k times k x n)
//    runs at `matmul x m/(m+d) x n/(n+d) x k/(k+d)` of the peak, d = `matmul_half_dim`: small
//    dimensions leave tiles and SMs idle, large ones approach `matmul`. It takes at least its
//    operands' bytes over the memory bandwidth (the roofline). Element-wise kernels (norms,
//    softmax, activations, dropout, Adam) are memory-bound: bytes / (bandwidth x `memory`).
//    Transfers and collectives reach `nvlink` of the NVLink bandwidth inside a node and
//    `network` of the network bandwidth between nodes.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/units.hpp"
#include "profiles/profile.hpp"

namespace recycle::profiles {

enum class DType : std::uint8_t { kBf16, kFp16, kTf32, kFp32 };

/// "bf16", "fp16", "tf32", "fp32".
[[nodiscard]] const char* to_string(DType dtype) noexcept;
/// Bytes of one activation or weight element of `dtype` (tf32 is stored as fp32).
[[nodiscard]] std::int64_t element_bytes(DType dtype) noexcept;

struct GpuEfficiency {
  double matmul = 1;           ///< fraction of the matrix peak a large product reaches
  double matmul_half_dim = 0;  ///< d in m/(m+d): the dimension at which a product halves
  double memory = 1;           ///< fraction of HBM bandwidth element-wise kernels reach
  double nvlink = 1;           ///< fraction of NVLink bandwidth transfers and collectives reach
  double network = 1;          ///< fraction of inter-node bandwidth transfers and collectives reach
};

struct GpuSpec {
  std::string name;
  double matmul_flops[4] = {0, 0, 0, 0};  ///< dense FLOP/s per DType; 0: not supported
  Bytes memory_bytes = 0;
  BytesPerSecond memory_bandwidth = 0;
  std::int32_t gpus_per_node = 8;
  BytesPerSecond intra_node_bandwidth = 0;  ///< NVLink, per GPU per direction
  BytesPerSecond inter_node_bandwidth = 0;  ///< network to other nodes, per GPU per direction
  Seconds intra_node_latency = 0;
  Seconds inter_node_latency = 0;
  GpuEfficiency efficiency;

  [[nodiscard]] double peak_flops(DType dtype) const noexcept {
    return matmul_flops[static_cast<int>(dtype)];
  }
  /// Seconds of an m x k by k x n matrix product, `batch` of them, in `dtype`.
  [[nodiscard]] Seconds matmul_time(std::int64_t m, std::int64_t n, std::int64_t k,
                                    std::int64_t batch, DType dtype) const noexcept;
  /// Seconds of an element-wise kernel that reads and writes `bytes` in all.
  [[nodiscard]] Seconds memory_time(double bytes) const noexcept;
  /// The network part, as a profile stores it.
  [[nodiscard]] HardwareSpec network() const noexcept;
};

/// InputError naming `source` and the field for anything missing, mistyped, out of range or
/// unknown.
[[nodiscard]] GpuSpec gpu_from_json(const nlohmann::json& json, const std::string& source);
[[nodiscard]] GpuSpec load_gpu(const std::string& path);

}  // namespace recycle::profiles
