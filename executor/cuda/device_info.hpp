// What the CUDA backend sees on this machine: the GPUs and the versions of the CUDA runtime,
// cuBLAS and NCCL it was linked against. The executor checks it before placing workers on GPUs.
#pragma once

#include <string>

namespace recycle::executor::cuda {

struct DeviceInfo {
  int device_count = 0;     ///< 0 when no GPU or no driver
  std::string error;        ///< why device_count is 0, if an error said so
  int runtime_version = 0;  ///< CUDA runtime, e.g. 13000
  int cublas_version = 0;   ///< from cublasGetProperty
  int nccl_version = 0;     ///< from ncclGetVersion
};

[[nodiscard]] DeviceInfo query_devices();

}  // namespace recycle::executor::cuda
