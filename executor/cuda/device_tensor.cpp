#include "executor/cuda/device_tensor.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace recycle::executor::cuda {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

namespace {

/// Whether this thread has chosen its device (select_device, a DeviceGuard).
thread_local bool t_chosen = false;

/// Copies `host` to `to` on the current device and waits for it: a plain cudaMemcpy from pageable
/// memory may return once the data is staged, before it lands, and on the legacy stream, which
/// the lanes' non-blocking streams do not wait for.
void copy_in(float* to, const std::vector<float>& host) {
  check(cudaMemcpyAsync(to, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice,
                        cudaStreamPerThread),
        "cudaMemcpyAsync (host to device)");
  check(cudaStreamSynchronize(cudaStreamPerThread), "cudaStreamSynchronize");
}

}  // namespace

void select_device(int device) {
  check(cudaSetDevice(device), "cudaSetDevice");
  t_chosen = true;
}

DeviceGuard::DeviceGuard(int device) : restore_(t_chosen) {
  check(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != device) check(cudaSetDevice(device), "cudaSetDevice");
  t_chosen = true;
}

DeviceGuard::~DeviceGuard() {
  if (restore_) static_cast<void>(cudaSetDevice(previous_));
}

DeviceTensor::DeviceTensor(std::size_t size, int device, cudaStream_t stream)
    : size_(size), device_(device), stream_(stream) {
  if (size == 0) return;
  const DeviceGuard guard(device);
  void* p = nullptr;
  if (stream != nullptr) {
    check(cudaMallocAsync(&p, size * sizeof(float), stream), "cudaMallocAsync");
  } else {
    check(cudaMallocAsync(&p, size * sizeof(float), cudaStreamPerThread), "cudaMallocAsync");
    check(cudaStreamSynchronize(cudaStreamPerThread), "cudaStreamSynchronize");
  }
  data_ = static_cast<float*>(p);
}

DeviceTensor::DeviceTensor(const DeviceTensor& other)
    : DeviceTensor(other.size_, other.device_, nullptr) {
  if (size_ == 0) return;
  const DeviceGuard guard(device_);
  check(cudaMemcpyAsync(data_, other.data_, size_ * sizeof(float), cudaMemcpyDeviceToDevice,
                        cudaStreamPerThread),
        "cudaMemcpyAsync (device to device)");
  check(cudaStreamSynchronize(cudaStreamPerThread), "cudaStreamSynchronize");
}

DeviceTensor& DeviceTensor::operator=(const DeviceTensor& other) {
  if (this != &other) *this = DeviceTensor(other);
  return *this;
}

DeviceTensor::DeviceTensor(DeviceTensor&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      device_(other.device_),
      stream_(std::exchange(other.stream_, nullptr)) {}

DeviceTensor& DeviceTensor::operator=(DeviceTensor&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    device_ = other.device_;
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

DeviceTensor::~DeviceTensor() {
  release();
}

void DeviceTensor::release() noexcept {
  if (data_ == nullptr) return;
  // Back to the pool after the work queued on its stream, which may still read it (a temporary
  // of an operation not yet finished); work of other streams on it has finished (the backend
  // synchronizes each operation). Without a stream, in the order of this thread's own.
  int previous = 0;
  static_cast<void>(cudaGetDevice(&previous));
  const bool restore = t_chosen;
  if (previous != device_) static_cast<void>(cudaSetDevice(device_));
  t_chosen = true;
  static_cast<void>(cudaFreeAsync(data_, stream_ != nullptr ? stream_ : cudaStreamPerThread));
  if (restore && previous != device_) static_cast<void>(cudaSetDevice(previous));
  data_ = nullptr;
}

DeviceTensor DeviceTensor::upload(const std::vector<float>& host, int device) {
  DeviceTensor t(host.size(), device, nullptr);
  if (!host.empty()) {
    const DeviceGuard guard(device);
    copy_in(t.data_, host);
  }
  return t;
}

void DeviceTensor::copy_from(const std::vector<float>& host) {
  if (host.size() != size_)
    throw std::runtime_error("a copy from the host of " + std::to_string(host.size()) +
                             " floats into a tensor of " + std::to_string(size_));
  if (size_ == 0) return;
  const DeviceGuard guard(device_);
  copy_in(data_, host);
}

std::vector<float> DeviceTensor::download() const {
  std::vector<float> host(size_);
  if (size_ != 0) {
    const DeviceGuard guard(device_);
    check(cudaMemcpy(host.data(), data_, size_ * sizeof(float), cudaMemcpyDeviceToHost),
          "cudaMemcpy (device to host)");
  }
  return host;
}

}  // namespace recycle::executor::cuda
