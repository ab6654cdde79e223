#include "executor/cuda/cuda_stage.hpp"

#include <stdexcept>
#include <string>

#include "executor/cuda/kernels.hpp"
#include "executor/cuda/transformer_kernels.hpp"
#include "executor/stage_layers.hpp"

namespace recycle::executor::cuda {

void check_blas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + ": cuBLAS status " +
                             std::to_string(static_cast<int>(status)));
  }
}

Lane::Lane(int device) : device_(device) {
  const DeviceGuard guard(device);
  // Keep freed memory in the device's pool rather than giving it back at each synchronization:
  // the workload frees and allocates the same sizes micro-batch after micro-batch.
  cudaMemPool_t pool = nullptr;
  check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
  std::uint64_t keep = UINT64_MAX;
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep),
        "cudaMemPoolSetAttribute");
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  if (const cublasStatus_t status = cublasCreate(&blas_); status != CUBLAS_STATUS_SUCCESS) {
    static_cast<void>(cudaStreamDestroy(stream_));
    check_blas(status, "cublasCreate");
  }
  check_blas(cublasSetStream(blas_, stream_), "cublasSetStream");
  check_blas(cublasSetMathMode(blas_, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
}

Lane::~Lane() {
  const DeviceGuard guard(device_);
  static_cast<void>(cudaStreamSynchronize(stream_));  // its tensors' stream-ordered frees
  static_cast<void>(cublasDestroy(blas_));
  static_cast<void>(cudaStreamDestroy(stream_));
  // What the pool kept goes back to the device, so that a later run's check of the free memory
  // (cudaMemGetInfo) sees it free.
  cudaMemPool_t pool = nullptr;
  if (cudaDeviceGetDefaultMemPool(&pool, device_) == cudaSuccess)
    static_cast<void>(cudaMemPoolTrimTo(pool, 0));
}

void Lane::finish() const {
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

namespace {

/// The layers' arithmetic (executor/layer_ops.hpp) on a lane: cuBLAS and the kernels.
struct CudaOps {
  using Buffer = DeviceTensor;
  const Lane& lane;

  [[nodiscard]] Buffer make(std::size_t n) const { return {n, lane.device(), lane.stream()}; }
  void copy(float* to, const float* from, std::size_t n) const {
    check(cudaMemcpyAsync(to, from, n * sizeof(float), cudaMemcpyDeviceToDevice, lane.stream()),
          "cudaMemcpyAsync");
  }
  void gemm(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda,
            const float* b, int ldb, float beta, float* c, int ldc) const {
    const float one = 1.0F;
    check_blas(cublasSgemm(lane.blas(), trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                           trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &one, a, lda, b, ldb,
                           &beta, c, ldc),
               "cublasSgemm");
  }
  void gemm_batched(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                    int lda, std::ptrdiff_t stride_a, const float* b, int ldb,
                    std::ptrdiff_t stride_b, float beta, float* c, int ldc, std::ptrdiff_t stride_c,
                    int count) const {
    check_blas(
        cublasSgemmStridedBatched(lane.blas(), trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                                  trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha, a, lda,
                                  stride_a, b, ldb, stride_b, &beta, c, ldc, stride_c, count),
        "cublasSgemmStridedBatched");
  }
  void add(float* y, const float* x, std::size_t n) const { cuda::add(y, x, n, lane.stream()); }
  void fill_rows(float* z, const float* bias, int rows, int width) const {
    cuda::fill_rows(z, bias, rows, width, lane.stream());
  }
  void tanh_inplace(float* z, std::size_t n) const { cuda::tanh_inplace(z, n, lane.stream()); }
  void tanh_backward(float* dz, const float* grad, const float* a, std::size_t n) const {
    cuda::tanh_backward(dz, grad, a, n, lane.stream());
  }
  void add_column_sums(float* db, const float* dz, int rows, int width) const {
    cuda::add_column_sums(db, dz, rows, width, lane.stream());
  }
  void layer_norm(float* out, float* xhat, float* rstd, const float* x, const float* gain,
                  const float* bias, int rows, int width) const {
    cuda::layer_norm(out, xhat, rstd, x, gain, bias, rows, width, lane.stream());
  }
  void layer_norm_backward(float* dx, const float* dout, const float* xhat, const float* rstd,
                           const float* gain, bool centered, int rows, int width) const {
    cuda::layer_norm_backward(dx, dout, xhat, rstd, gain, centered, rows, width, lane.stream());
  }
  void layer_norm_weight(float* dgain, float* dbias, const float* dout, const float* xhat, int rows,
                         int width) const {
    cuda::layer_norm_weight(dgain, dbias, dout, xhat, rows, width, lane.stream());
  }
  void gelu(float* out, const float* u, std::size_t n) const {
    cuda::gelu(out, u, n, lane.stream());
  }
  void gelu_backward(float* du, const float* u, std::size_t n) const {
    cuda::gelu_backward(du, u, n, lane.stream());
  }
  void swiglu(float* out, const float* u, int rows, int f) const {
    cuda::swiglu(out, u, rows, f, lane.stream());
  }
  void swiglu_backward(float* du, const float* dout, const float* u, int rows, int f) const {
    cuda::swiglu_backward(du, dout, u, rows, f, lane.stream());
  }
  void rotary(float* x, int rows, int ld, int heads, int head_dim, int sequence,
              bool inverse) const {
    cuda::rotary(x, rows, ld, heads, head_dim, sequence, inverse, lane.stream());
  }
  void causal_softmax(float* p, int sequence, int count) const {
    cuda::causal_softmax(p, sequence, count, lane.stream());
  }
  void softmax_backward(float* dp, const float* p, int sequence, int count) const {
    cuda::softmax_backward(dp, p, sequence, count, lane.stream());
  }
};

}  // namespace

CudaStage::CudaStage(const Lane& lane, const StageShape& shape, std::int32_t stage,
                     std::uint64_t seed)
    : lane_(&lane), shape_(shape) {
  const StageParams initial(shape, stage, seed);
  params_ = DeviceTensor::upload(initial.parameters(), lane.device());
  gradients_ =
      DeviceTensor::upload(std::vector<float>(initial.parameters().size(), 0.0F), lane.device());
}

DeviceTensor CudaStage::forward(const DeviceTensor& input, DeviceChunk& chunk) const {
  CudaOps ops{*lane_};
  chunk.saved.clear();
  chunk.grads.clear();
  DeviceTensor out = with_stage_layers(ops, shape_, [&](auto& layers) {
    return layers.forward(params_.data(), input, chunk.saved);
  });
  lane_->finish();
  return out;
}

DeviceTensor CudaStage::backward_input(const DeviceTensor& output_gradient,
                                       DeviceChunk& chunk) const {
  CudaOps ops{*lane_};
  DeviceTensor dx = with_stage_layers(ops, shape_, [&](auto& layers) {
    return layers.backward_input(params_.data(), chunk.saved, output_gradient, chunk.grads);
  });
  lane_->finish();
  return dx;
}

void CudaStage::backward_weight(const DeviceChunk& chunk) {
  CudaOps ops{*lane_};
  with_stage_layers(ops, shape_, [&](auto& layers) {
    layers.backward_weight(chunk.saved, chunk.grads, gradients_.data());
  });
  lane_->finish();
}

void CudaStage::step(double learning_rate, std::int64_t microbatches) {
  sgd_step(params_.data(), gradients_.data(), learning_rate / static_cast<double>(microbatches),
           params_.size(), lane_->stream());
  lane_->finish();
}

double CudaStage::loss(const Lane& lane, const DeviceTensor& output, const DeviceTensor& target,
                       DeviceTensor& gradient) {
  const std::size_t n = output.size();
  gradient = DeviceTensor(n, lane.device(), lane.stream());
  loss_gradient(output.data(), target.data(), gradient.data(), n, lane.stream());
  // 0.5 x mean of (out - target)^2 = 0.5 n x the sum of the gradient's squares.
  float squares = 0;
  check_blas(cublasSdot(lane.blas(), static_cast<int>(n), gradient.data(), 1, gradient.data(), 1,
                        &squares),
             "cublasSdot");
  lane.finish();
  return 0.5 * static_cast<double>(n) * static_cast<double>(squares);
}

}  // namespace recycle::executor::cuda
