// How much more arithmetic one GPU does when several workers' streams compute on it at once than
// when one does: kernels of one stream fill the SMs another leaves idle (a GEMM's last partial
// wave, a kernel too small to fill the GPU, the gap while a worker's thread waits for its stream
// and launches its next action). The prediction for workers sharing a GPU uses it
// (sim/shared_cores.hpp's throughput); measured, not assumed.
#pragma once

#include <cstdint>
#include <vector>

#include "executor/stage_math.hpp"

namespace recycle::executor::cuda {

/// throughput[n - 1] = n x wall(1) / wall(n) for n = 1..streams (so throughput[0] = 1), where
/// wall(n) is the time n threads take to each run `rounds` micro-batches of F, I and W of `shape`
/// one after another, each thread with its own stream, cuBLAS handle and copy of the stage on GPU
/// `device`, waiting for its stream after every action as a run's workers do. One micro-batch of
/// each thread is run first, untimed. Throws on a CUDA error.
[[nodiscard]] std::vector<double> measure_gpu_sharing(const StageShape& shape, int device,
                                                      std::int32_t streams, std::int32_t rounds);

}  // namespace recycle::executor::cuda
