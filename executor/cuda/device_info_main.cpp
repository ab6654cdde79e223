// recycle-cuda-info: prints the GPUs and library versions the CUDA backend sees.
#include <cstdio>

#include "executor/cuda/device_info.hpp"

int main() {
  const auto info = recycle::executor::cuda::query_devices();
  std::printf("cuda runtime %d, cublas %d, nccl %d\n", info.runtime_version, info.cublas_version,
              info.nccl_version);
  if (info.device_count == 0) {
    std::printf("no GPU visible%s%s\n", info.error.empty() ? "" : ": ", info.error.c_str());
    return 1;
  }
  std::printf("%d GPU(s) visible\n", info.device_count);
  return 0;
}
