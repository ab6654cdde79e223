#include "executor/cuda/device_tensor.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace recycle::executor::cuda {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

DeviceGuard::DeviceGuard(int device) {
  check(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != device) check(cudaSetDevice(device), "cudaSetDevice");
}

DeviceGuard::~DeviceGuard() {
  static_cast<void>(cudaSetDevice(previous_));
}

DeviceTensor::DeviceTensor(std::size_t size, int device, cudaStream_t stream)
    : size_(size), device_(device) {
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
      device_(other.device_) {}

DeviceTensor& DeviceTensor::operator=(DeviceTensor&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    device_ = other.device_;
  }
  return *this;
}

DeviceTensor::~DeviceTensor() {
  release();
}

void DeviceTensor::release() noexcept {
  if (data_ == nullptr) return;
  // Every use of the memory has finished (the backend synchronizes each operation), so it goes
  // back to the pool in the order of this thread's own stream, which has nothing queued.
  int previous = 0;
  static_cast<void>(cudaGetDevice(&previous));
  static_cast<void>(cudaSetDevice(device_));
  static_cast<void>(cudaFreeAsync(data_, cudaStreamPerThread));
  static_cast<void>(cudaSetDevice(previous));
  data_ = nullptr;
}

DeviceTensor DeviceTensor::upload(const std::vector<float>& host, int device) {
  DeviceTensor t(host.size(), device, nullptr);
  if (!host.empty()) {
    const DeviceGuard guard(device);
    check(cudaMemcpy(t.data_, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice),
          "cudaMemcpy (host to device)");
  }
  return t;
}

void DeviceTensor::copy_from(const std::vector<float>& host) {
  if (host.size() != size_)
    throw std::runtime_error("a copy from the host of " + std::to_string(host.size()) +
                             " floats into a tensor of " + std::to_string(size_));
  if (size_ == 0) return;
  const DeviceGuard guard(device_);
  check(cudaMemcpy(data_, host.data(), size_ * sizeof(float), cudaMemcpyHostToDevice),
        "cudaMemcpy (host to device)");
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
