// recycle-cuda-info: prints the GPUs and library versions the CUDA backend sees; with
// --bandwidth, also the rate of each transfer path the backend uses (executor/cuda/bandwidth.hpp).
#include <cstdio>
#include <cstring>
#include <exception>

#include "executor/cuda/bandwidth.hpp"
#include "executor/cuda/device_info.hpp"

int main(int argc, char** argv) {
  bool bandwidth = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--bandwidth") == 0) {
      bandwidth = true;
    } else {
      std::fprintf(stderr,
                   "error: recycle-cuda-info: unknown argument '%s' (usage: recycle-cuda-info "
                   "[--bandwidth])\n",
                   argv[i]);
      return 2;
    }
  }
  const auto info = recycle::executor::cuda::query_devices();
  std::printf("cuda runtime %d, cublas %d, nccl %d\n", info.runtime_version, info.cublas_version,
              info.nccl_version);
  if (info.device_count == 0) {
    std::printf("no GPU visible%s%s\n", info.error.empty() ? "" : ": ", info.error.c_str());
    return 1;
  }
  std::printf("%d GPU(s) visible\n", info.device_count);
  if (!bandwidth) return 0;
  try {
    constexpr std::size_t kBytes = std::size_t{1} << 30;
    std::printf("%-52s %12s %12s %10s\n", "path", "bytes", "median ms", "GB/s");
    for (const auto& r : recycle::executor::cuda::measure_transfers(kBytes, 10))
      std::printf("%-52s %12zu %12.3f %10.1f\n", r.path.c_str(), r.bytes, r.seconds * 1e3,
                  r.bytes_per_s / 1e9);
    if (info.device_count < 2)
      std::printf("one GPU: the copy between GPUs and the NCCL all-reduce need two\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: recycle-cuda-info --bandwidth: %s\n", e.what());
    return 1;
  }
  return 0;
}
