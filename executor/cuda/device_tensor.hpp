// The cuda backend's memory: a float array on one GPU, allocated from the device's stream-ordered
// pool. Every operation of the backend finishes (its stream synchronized) before it returns, so a
// tensor may be handed to another worker's thread and freed there. A tensor is freed in the order
// of the stream it was allocated in the order of: a temporary that dies while its lane's kernels
// still read it goes back to the pool only after them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

namespace recycle::executor::cuda {

/// Throws std::runtime_error naming `what` and CUDA's message when `status` is not success.
void check(cudaError_t status, const char* what);

/// Makes `device` the calling thread's current device for good (a worker's thread, on entering).
void select_device(int device);

/// Makes `device` current for its lifetime and restores the previous one, if the thread had
/// chosen one (select_device or a guard): a thread that never did is left on `device`, since
/// restoring CUDA's default, GPU 0, would create a context there (in every process of a machine).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool restore_ = false;
};

class DeviceTensor {
 public:
  DeviceTensor() = default;
  /// `size` floats on `device`, allocated in the order of `stream` (a stream of that device, which
  /// must outlive the tensor: it is freed in that order too), or of the calling thread's own
  /// stream there (then finished before it returns) when null.
  DeviceTensor(std::size_t size, int device, cudaStream_t stream);
  /// A copy on the same device, finished before it returns.
  DeviceTensor(const DeviceTensor& other);
  DeviceTensor& operator=(const DeviceTensor& other);
  DeviceTensor(DeviceTensor&& other) noexcept;
  DeviceTensor& operator=(DeviceTensor&& other) noexcept;
  ~DeviceTensor();

  [[nodiscard]] float* data() noexcept { return data_; }
  [[nodiscard]] const float* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] int device() const noexcept { return device_; }

  /// A copy of `host` on `device`, finished before it returns (the copy from pageable memory
  /// waited for, not only staged).
  static DeviceTensor upload(const std::vector<float>& host, int device);
  /// The contents, copied to the host.
  [[nodiscard]] std::vector<float> download() const;
  /// Overwrites the contents with `host` (as many floats), finished before it returns.
  void copy_from(const std::vector<float>& host);

 private:
  void release() noexcept;

  float* data_ = nullptr;
  std::size_t size_ = 0;
  int device_ = -1;
  cudaStream_t stream_ = nullptr;  ///< allocated (and freed) in its order; null: per thread
};

}  // namespace recycle::executor::cuda
