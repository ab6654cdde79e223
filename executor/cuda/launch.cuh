// What every kernel file of the cuda backend shares: the block size, the grid for a grid-stride
// loop, and the check after a launch.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace recycle::executor::cuda {

/// Threads per block; a row-wise kernel runs one block of kThreads per row.
inline constexpr int kThreads = 256;

/// Blocks for n elements with a grid-stride loop (at most 65,535 x 16 blocks).
inline unsigned blocks_for(std::size_t n) {
  const std::size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 1048560 ? 1048560 : b));
}

/// Throws std::runtime_error naming `what` when the last launch failed.
inline void launched(const char* what) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("launching ") + what + ": " + cudaGetErrorString(status));
}

}  // namespace recycle::executor::cuda
