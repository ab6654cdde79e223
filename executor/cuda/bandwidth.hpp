// The transfer paths of the cuda backend timed on this machine's GPUs, for comparison with the
// hardware's spec (recycle-cuda-info --bandwidth): a copy within GPU memory (what a SEND between
// workers sharing a GPU is), copies between host and GPU, and, with two GPUs or more, a copy
// between GPUs and an NCCL all-reduce over all of them (the paths of workers on their own GPUs).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace recycle::executor::cuda {

struct TransferRate {
  std::string path;        ///< e.g. "device to device (GPU 0)"
  std::size_t bytes = 0;   ///< bytes moved by one operation
  double seconds = 0;      ///< median time of one operation
  double bytes_per_s = 0;  ///< bytes / seconds; for an all-reduce the bus bandwidth (nccl-tests)
};

/// Times each path `repetitions` times on `bytes` bytes after one warm-up; throws on a CUDA or
/// NCCL error.
[[nodiscard]] std::vector<TransferRate> measure_transfers(std::size_t bytes, int repetitions);

}  // namespace recycle::executor::cuda
