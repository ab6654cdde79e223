#include "executor/cuda/device_info.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <library_types.h>
#include <nccl.h>

namespace recycle::executor::cuda {

DeviceInfo query_devices() {
  DeviceInfo info;
  cudaRuntimeGetVersion(&info.runtime_version);
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS) {
    info.cublas_version = major * 10000 + minor * 100 + patch;
  }
  ncclGetVersion(&info.nccl_version);
  const cudaError_t err = cudaGetDeviceCount(&info.device_count);
  if (err != cudaSuccess) {
    info.device_count = 0;
    info.error = cudaGetErrorString(err);
  }
  return info;
}

}  // namespace recycle::executor::cuda
