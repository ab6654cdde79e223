// The cuda backend's element-wise kernels: the loops of the cpu backend's arithmetic
// (executor/stage_math.cpp's CpuOps, StageParams::loss and step, executor/channels.cpp's
// reduce_shard) on a stream, each element computed as the cpu backend computes it. Each call
// queues the kernel and returns; it throws std::runtime_error when the launch fails.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace recycle::executor::cuda {

/// z[r, c] = bias[c] for a rows x width row-major z.
void fill_rows(float* z, const float* bias, int rows, int width, cudaStream_t stream);
/// z = tanh(z).
void tanh_inplace(float* z, std::size_t n, cudaStream_t stream);
/// dz = grad (1 - a^2).
void tanh_backward(float* dz, const float* grad, const float* a, std::size_t n,
                   cudaStream_t stream);
/// db[c] += the sum over the rows of dz[r, c], rows in order.
void add_column_sums(float* db, const float* dz, int rows, int width, cudaStream_t stream);
/// gradient = (out - target) / n, computed in double as StageParams::loss does.
void loss_gradient(const float* out, const float* target, float* gradient, std::size_t n,
                   cudaStream_t stream);
/// params -= scale x gradients (scale in double, as StageParams::step), then gradients = 0.
void sgd_step(float* params, float* gradients, double scale, std::size_t n, cudaStream_t stream);

/// Most vectors sum_in_order adds in one pass.
inline constexpr int kMaxSummands = 64;
/// out[i] = in[0][i] + in[1][i] + ... in that order, for i in [0, n) (out may be one of in).
void sum_in_order(float* out, const float* const* in, int count, std::size_t n,
                  cudaStream_t stream);

}  // namespace recycle::executor::cuda
