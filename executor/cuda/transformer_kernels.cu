#include "executor/cuda/transformer_kernels.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "executor/cuda/launch.cuh"
#include "executor/layer_ops.hpp"

namespace recycle::executor::cuda {

namespace {

constexpr int kWarps = kThreads / 32;

struct Add {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct Max {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a > b ? a : b;
  }
};

/// The reduction of every thread's `value` over the block (kThreads threads), the same on every
/// thread: within each warp by shuffles, then the warps' results in warp order.
template <class T, class Op>
__device__ T block_reduce(T value, Op op) {
  __shared__ T partial[kWarps];
  for (int offset = 16; offset > 0; offset /= 2)
    value = op(value, __shfl_down_sync(0xffffffffU, value, offset));
  __syncthreads();  // every thread has read the previous reduction's partials
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = value;
  __syncthreads();
  T total = partial[0];
  for (int w = 1; w < kWarps; ++w) total = op(total, partial[w]);
  return total;
}

__global__ void add_kernel(float* y, const float* x, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    y[i] += x[i];
}

__global__ void layer_norm_kernel(float* out, float* xhat, float* rstd, const float* x,
                                  const float* gain, const float* bias, int width) {
  const std::size_t at = blockIdx.x * static_cast<std::size_t>(width);
  const float* row = x + at;
  double sum = 0;
  if (bias != nullptr) {
    for (int c = threadIdx.x; c < width; c += kThreads) sum += row[c];
  }
  // Every thread takes part in the reduction; without a bias (RMSNorm) the mean is 0.
  const double mean = block_reduce(sum, Add{}) / width;
  double squares = 0;
  for (int c = threadIdx.x; c < width; c += kThreads) squares += (row[c] - mean) * (row[c] - mean);
  const double var = block_reduce(squares, Add{}) / width;
  const auto s = static_cast<float>(1.0 / sqrt(var + kLayerNormEpsilon));
  if (threadIdx.x == 0) rstd[blockIdx.x] = s;
  for (int c = threadIdx.x; c < width; c += kThreads) {
    const float normalized = static_cast<float>(row[c] - mean) * s;
    xhat[at + c] = normalized;
    out[at + c] = normalized * gain[c] + (bias != nullptr ? bias[c] : 0.0F);
  }
}

__global__ void layer_norm_backward_kernel(float* dx, const float* dout, const float* xhat,
                                           const float* rstd, const float* gain, bool centered,
                                           int width) {
  const std::size_t at = blockIdx.x * static_cast<std::size_t>(width);
  double sum = 0, dot = 0;
  for (int c = threadIdx.x; c < width; c += kThreads) {
    const float g = dout[at + c] * gain[c];
    sum += g;
    dot += static_cast<double>(g) * xhat[at + c];
  }
  sum = centered ? block_reduce(sum, Add{}) : 0.0;
  dot = block_reduce(dot, Add{});
  const float s = rstd[blockIdx.x] / static_cast<float>(width);
  for (int c = threadIdx.x; c < width; c += kThreads) {
    const float g = dout[at + c] * gain[c];
    dx[at + c] += s * static_cast<float>(width * g - sum - xhat[at + c] * dot);
  }
}

__global__ void layer_norm_weight_kernel(float* dgain, float* dbias, const float* dout,
                                         const float* xhat, int rows, int width) {
  for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < width; c += gridDim.x * blockDim.x) {
    float g = dgain[c], b = dbias != nullptr ? dbias[c] : 0.0F;
    for (int r = 0; r < rows; ++r) {
      const std::size_t i = static_cast<std::size_t>(r) * width + c;
      g += dout[i] * xhat[i];
      b += dout[i];
    }
    dgain[c] = g;
    if (dbias != nullptr) dbias[c] = b;
  }
}

__global__ void gelu_kernel(float* out, const float* u, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = gelu_of(u[i]);
}

__global__ void gelu_backward_kernel(float* du, const float* u, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    du[i] *= gelu_derivative(u[i]);
}

__global__ void swiglu_kernel(float* out, const float* u, int rows, int f) {
  const std::size_t n = static_cast<std::size_t>(rows) * f;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t at = i / f * 2 * f + i % f;
    out[i] = silu_of(u[at]) * u[at + f];
  }
}

__global__ void swiglu_backward_kernel(float* du, const float* dout, const float* u, int rows,
                                       int f) {
  const std::size_t n = static_cast<std::size_t>(rows) * f;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t at = i / f * 2 * f + i % f;
    const float g = u[at], v = u[at + f];
    du[at] = dout[i] * v * silu_derivative(g);
    du[at + f] = dout[i] * silu_of(g);
  }
}

/// One thread per (row, head, feature pair).
__global__ void rotary_kernel(float* x, int rows, int ld, int heads, int head_dim, int sequence,
                              bool inverse) {
  const int half = head_dim / 2;
  const std::size_t n = static_cast<std::size_t>(rows) * heads * half;
  for (std::size_t k = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; k < n;
       k += std::size_t{gridDim.x} * blockDim.x) {
    const auto i = static_cast<int>(k % half);
    const auto j = static_cast<int>(k / half % heads);
    const std::size_t r = k / half / heads;
    double sine = 0, cosine = 0;
    sincos(static_cast<double>(r % sequence) * rotary_frequency(i, head_dim), &sine, &cosine);
    const auto c = static_cast<float>(cosine);
    const auto s = static_cast<float>(inverse ? -sine : sine);
    float* pair = x + r * ld + static_cast<std::size_t>(j) * head_dim + i;
    const float first = pair[0], second = pair[half];
    pair[0] = first * c - second * s;
    pair[half] = second * c + first * s;
  }
}

__global__ void causal_softmax_kernel(float* p, int sequence) {
  float* row = p + blockIdx.x * static_cast<std::size_t>(sequence);
  const int last = static_cast<int>(blockIdx.x % static_cast<unsigned>(sequence));
  float top = -INFINITY;
  for (int j = threadIdx.x; j <= last; j += kThreads) top = row[j] > top ? row[j] : top;
  top = block_reduce(top, Max{});
  float sum = 0;
  for (int j = threadIdx.x; j <= last; j += kThreads) {
    row[j] = expf(row[j] - top);
    sum += row[j];
  }
  sum = block_reduce(sum, Add{});
  for (int j = threadIdx.x; j < sequence; j += kThreads) row[j] = j <= last ? row[j] / sum : 0.0F;
}

__global__ void softmax_backward_kernel(float* dp, const float* p, int sequence) {
  const std::size_t at = blockIdx.x * static_cast<std::size_t>(sequence);
  float dot = 0;
  for (int j = threadIdx.x; j < sequence; j += kThreads) dot += dp[at + j] * p[at + j];
  dot = block_reduce(dot, Add{});
  for (int j = threadIdx.x; j < sequence; j += kThreads)
    dp[at + j] = p[at + j] * (dp[at + j] - dot);
}

/// One block per row; rows beyond a grid's x limit are not expected (a row is a token).
unsigned row_blocks(std::size_t rows, const char* what) {
  if (rows > 0x7fffffffU) throw std::runtime_error(std::string(what) + ": too many rows");
  return static_cast<unsigned>(rows);
}

}  // namespace

void add(float* y, const float* x, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  add_kernel<<<blocks_for(n), kThreads, 0, stream>>>(y, x, n);
  launched("add");
}

void layer_norm(float* out, float* xhat, float* rstd, const float* x, const float* gain,
                const float* bias, int rows, int width, cudaStream_t stream) {
  if (rows <= 0) return;
  layer_norm_kernel<<<row_blocks(static_cast<std::size_t>(rows), "layer_norm"), kThreads, 0,
                      stream>>>(out, xhat, rstd, x, gain, bias, width);
  launched("layer_norm");
}

void layer_norm_backward(float* dx, const float* dout, const float* xhat, const float* rstd,
                         const float* gain, bool centered, int rows, int width,
                         cudaStream_t stream) {
  if (rows <= 0) return;
  layer_norm_backward_kernel<<<row_blocks(static_cast<std::size_t>(rows), "layer_norm_backward"),
                               kThreads, 0, stream>>>(dx, dout, xhat, rstd, gain, centered, width);
  launched("layer_norm_backward");
}

void layer_norm_weight(float* dgain, float* dbias, const float* dout, const float* xhat, int rows,
                       int width, cudaStream_t stream) {
  layer_norm_weight_kernel<<<blocks_for(static_cast<std::size_t>(width)), kThreads, 0, stream>>>(
      dgain, dbias, dout, xhat, rows, width);
  launched("layer_norm_weight");
}

void gelu(float* out, const float* u, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  gelu_kernel<<<blocks_for(n), kThreads, 0, stream>>>(out, u, n);
  launched("gelu");
}

void gelu_backward(float* du, const float* u, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  gelu_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(du, u, n);
  launched("gelu_backward");
}

void swiglu(float* out, const float* u, int rows, int f, cudaStream_t stream) {
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(f);
  if (n == 0) return;
  swiglu_kernel<<<blocks_for(n), kThreads, 0, stream>>>(out, u, rows, f);
  launched("swiglu");
}

void swiglu_backward(float* du, const float* dout, const float* u, int rows, int f,
                     cudaStream_t stream) {
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(f);
  if (n == 0) return;
  swiglu_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(du, dout, u, rows, f);
  launched("swiglu_backward");
}

void rotary(float* x, int rows, int ld, int heads, int head_dim, int sequence, bool inverse,
            cudaStream_t stream) {
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(heads) *
                        static_cast<std::size_t>(head_dim / 2);
  if (n == 0) return;
  rotary_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, rows, ld, heads, head_dim, sequence,
                                                        inverse);
  launched("rotary");
}

void causal_softmax(float* p, int sequence, int count, cudaStream_t stream) {
  const std::size_t rows = static_cast<std::size_t>(sequence) * static_cast<std::size_t>(count);
  if (rows == 0) return;
  causal_softmax_kernel<<<row_blocks(rows, "causal_softmax"), kThreads, 0, stream>>>(p, sequence);
  launched("causal_softmax");
}

void softmax_backward(float* dp, const float* p, int sequence, int count, cudaStream_t stream) {
  const std::size_t rows = static_cast<std::size_t>(sequence) * static_cast<std::size_t>(count);
  if (rows == 0) return;
  softmax_backward_kernel<<<row_blocks(rows, "softmax_backward"), kThreads, 0, stream>>>(dp, p,
                                                                                         sequence);
  launched("softmax_backward");
}

}  // namespace recycle::executor::cuda
