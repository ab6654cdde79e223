// The cuda backend's kernels for transformer blocks: the row-wise operations of the `Ops` contract
// (executor/layer_ops.hpp says what each computes; executor/cpu_ops.cpp is the same on the cpu),
// each row reduced by one block in a fixed order, so a run gives the same bits every time. Each
// call queues the kernel and returns; it throws std::runtime_error when the launch fails.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace recycle::executor::cuda {

/// y += x.
void add(float* y, const float* x, std::size_t n, cudaStream_t stream);
void layer_norm(float* out, float* xhat, float* rstd, const float* x, const float* gain,
                const float* bias, int rows, int width, cudaStream_t stream);
void layer_norm_backward(float* dx, const float* dout, const float* xhat, const float* rstd,
                         const float* gain, bool centered, int rows, int width,
                         cudaStream_t stream);
void layer_norm_weight(float* dgain, float* dbias, const float* dout, const float* xhat, int rows,
                       int width, cudaStream_t stream);
void gelu(float* out, const float* u, std::size_t n, cudaStream_t stream);
void gelu_backward(float* du, const float* u, std::size_t n, cudaStream_t stream);
void swiglu(float* out, const float* u, int rows, int f, cudaStream_t stream);
void swiglu_backward(float* du, const float* dout, const float* u, int rows, int f,
                     cudaStream_t stream);
void rotary(float* x, int rows, int ld, int heads, int head_dim, int sequence, bool inverse,
            cudaStream_t stream);
void causal_softmax(float* p, int sequence, int count, cudaStream_t stream);
void softmax_backward(float* dp, const float* p, int sequence, int count, cudaStream_t stream);

}  // namespace recycle::executor::cuda
