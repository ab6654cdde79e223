#include "executor/cuda/kernels.hpp"

#include <stdexcept>
#include <string>

#include "executor/cuda/launch.cuh"

namespace recycle::executor::cuda {

namespace {

__global__ void fill_rows_kernel(float* z, const float* bias, std::size_t rows, int width) {
  const std::size_t n = rows * static_cast<std::size_t>(width);
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    z[i] = bias[i % static_cast<std::size_t>(width)];
}

__global__ void tanh_kernel(float* z, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    z[i] = tanhf(z[i]);
}

__global__ void tanh_backward_kernel(float* dz, const float* grad, const float* a, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    dz[i] = grad[i] * (1.0F - a[i] * a[i]);
}

__global__ void column_sums_kernel(float* db, const float* dz, int rows, int width) {
  for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < width; c += gridDim.x * blockDim.x) {
    float sum = db[c];
    for (int r = 0; r < rows; ++r) sum += dz[static_cast<std::size_t>(r) * width + c];
    db[c] = sum;
  }
}

__global__ void loss_gradient_kernel(const float* out, const float* target, float* gradient,
                                     std::size_t n) {
  const double count = static_cast<double>(n);
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const double d = static_cast<double>(out[i]) - static_cast<double>(target[i]);
    gradient[i] = static_cast<float>(d / count);
  }
}

__global__ void sgd_kernel(float* params, float* gradients, double scale, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    params[i] -= static_cast<float>(scale * static_cast<double>(gradients[i]));
    gradients[i] = 0.0F;
  }
}

struct Summands {
  const float* in[kMaxSummands];
};

__global__ void sum_kernel(float* out, Summands summands, int count, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    float sum = summands.in[0][i];
    for (int r = 1; r < count; ++r) sum += summands.in[r][i];
    out[i] = sum;
  }
}

}  // namespace

void fill_rows(float* z, const float* bias, int rows, int width, cudaStream_t stream) {
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(width);
  fill_rows_kernel<<<blocks_for(n), kThreads, 0, stream>>>(z, bias, static_cast<std::size_t>(rows),
                                                           width);
  launched("fill_rows");
}

void tanh_inplace(float* z, std::size_t n, cudaStream_t stream) {
  tanh_kernel<<<blocks_for(n), kThreads, 0, stream>>>(z, n);
  launched("tanh");
}

void tanh_backward(float* dz, const float* grad, const float* a, std::size_t n,
                   cudaStream_t stream) {
  tanh_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dz, grad, a, n);
  launched("tanh_backward");
}

void add_column_sums(float* db, const float* dz, int rows, int width, cudaStream_t stream) {
  column_sums_kernel<<<blocks_for(static_cast<std::size_t>(width)), kThreads, 0, stream>>>(
      db, dz, rows, width);
  launched("add_column_sums");
}

void loss_gradient(const float* out, const float* target, float* gradient, std::size_t n,
                   cudaStream_t stream) {
  loss_gradient_kernel<<<blocks_for(n), kThreads, 0, stream>>>(out, target, gradient, n);
  launched("loss_gradient");
}

void sgd_step(float* params, float* gradients, double scale, std::size_t n, cudaStream_t stream) {
  sgd_kernel<<<blocks_for(n), kThreads, 0, stream>>>(params, gradients, scale, n);
  launched("sgd_step");
}

void sum_in_order(float* out, const float* const* in, int count, std::size_t n,
                  cudaStream_t stream) {
  if (count < 1 || count > kMaxSummands)
    throw std::runtime_error("sum_in_order: " + std::to_string(count) + " summands");
  if (n == 0) return;
  Summands summands{};
  for (int r = 0; r < count; ++r) summands.in[r] = in[r];
  sum_kernel<<<blocks_for(n), kThreads, 0, stream>>>(out, summands, count, n);
  launched("sum_in_order");
}

}  // namespace recycle::executor::cuda
