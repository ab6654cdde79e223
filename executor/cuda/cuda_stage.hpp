// The cuda backend's stage: the workload of executor/stage_math.hpp (dense layers or transformer
// blocks) with its parameters and gradients on a GPU, F, I and W run by executor/stage_layers.hpp's
// one definition on cuBLAS (fp32, no TF32: the same products as the cpu backend to rounding) and
// the kernels of executor/cuda/kernels.hpp and transformer_kernels.hpp, each operation queued on
// its worker's stream and finished before it returns.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "executor/cuda/device_tensor.hpp"
#include "executor/stage_math.hpp"

namespace recycle::executor::cuda {

/// Throws std::runtime_error naming `what` when a cuBLAS call failed.
void check_blas(cublasStatus_t status, const char* what);

/// A worker's place on a GPU: the device, the stream its work is queued on, its cuBLAS handle.
class Lane {
 public:
  explicit Lane(int device);
  ~Lane();
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;

  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_; }
  [[nodiscard]] cublasHandle_t blas() const noexcept { return blas_; }
  /// Waits until everything queued on the stream has finished.
  void finish() const;

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
};

/// What one micro-batch keeps on a GPU from its F until its W (as executor::Chunk).
struct DeviceChunk {
  std::vector<DeviceTensor> saved;
  std::vector<DeviceTensor> grads;
};

class CudaStage {
 public:
  /// The same initial weights as StageParams(shape, stage, seed), on `lane`'s device.
  CudaStage(const Lane& lane, const StageShape& shape, std::int32_t stage, std::uint64_t seed);

  [[nodiscard]] DeviceTensor forward(const DeviceTensor& input, DeviceChunk& chunk) const;
  [[nodiscard]] DeviceTensor backward_input(const DeviceTensor& output_gradient,
                                            DeviceChunk& chunk) const;
  void backward_weight(const DeviceChunk& chunk);
  /// SGD on the mean gradient over `microbatches` micro-batches, then zeroes the gradients.
  void step(double learning_rate, std::int64_t microbatches);
  [[nodiscard]] DeviceTensor& gradients() noexcept { return gradients_; }
  [[nodiscard]] const DeviceTensor& parameters() const noexcept { return params_; }

  /// The loss of one micro-batch at the last stage (StageParams::loss) and its gradient.
  static double loss(const Lane& lane, const DeviceTensor& output, const DeviceTensor& target,
                     DeviceTensor& gradient);

 private:
  const Lane* lane_;
  StageShape shape_;
  DeviceTensor params_;
  DeviceTensor gradients_;
};

}  // namespace recycle::executor::cuda
