#include "executor/cuda/bandwidth.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "executor/cuda/device_tensor.hpp"

namespace recycle::executor::cuda {
namespace {

void check_nccl(ncclResult_t status, const char* what) {
  if (status != ncclSuccess)
    throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(status));
}

/// Median seconds of `op` (which queues its work on `stream`) over `repetitions` runs, each timed
/// with events on `stream`, after one untimed run.
double median_seconds(cudaStream_t stream, int repetitions, const std::function<void()>& op) {
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  op();
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::vector<double> times;
  for (int r = 0; r < repetitions; ++r) {
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    op();
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    times.push_back(ms * 1e-3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

TransferRate rate(std::string path, std::size_t bytes, double seconds, double factor = 1.0) {
  return {std::move(path), bytes, seconds, factor * static_cast<double>(bytes) / seconds};
}

}  // namespace

std::vector<TransferRate> measure_transfers(std::size_t bytes, int repetitions) {
  int devices = 0;
  check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  std::vector<TransferRate> out;
  void* a = nullptr;
  void* b = nullptr;
  void* host = nullptr;
  select_device(0);
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaMalloc(&a, bytes), "cudaMalloc");
  check(cudaMalloc(&b, bytes), "cudaMalloc");
  check(cudaMallocHost(&host, bytes), "cudaMallocHost");
  check(cudaMemsetAsync(a, 0, bytes, stream), "cudaMemsetAsync");
  out.push_back(rate("device to device (GPU 0)", bytes, median_seconds(stream, repetitions, [&] {
                       check(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream),
                             "cudaMemcpyAsync");
                     })));
  out.push_back(rate("host to device (pinned)", bytes, median_seconds(stream, repetitions, [&] {
                       check(cudaMemcpyAsync(a, host, bytes, cudaMemcpyHostToDevice, stream),
                             "cudaMemcpyAsync");
                     })));
  out.push_back(rate("device to host (pinned)", bytes, median_seconds(stream, repetitions, [&] {
                       check(cudaMemcpyAsync(host, a, bytes, cudaMemcpyDeviceToHost, stream),
                             "cudaMemcpyAsync");
                     })));
  if (devices >= 2) {
    void* peer = nullptr;
    select_device(1);
    check(cudaMalloc(&peer, bytes), "cudaMalloc");
    select_device(0);
    out.push_back(rate("GPU 0 to GPU 1", bytes, median_seconds(stream, repetitions, [&] {
                         check(cudaMemcpyPeerAsync(peer, 1, a, 0, bytes, stream),
                               "cudaMemcpyPeerAsync");
                       })));
    cudaFree(peer);
    // One communicator per GPU, each all-reducing its own buffer; timed on GPU 0's stream after
    // the others' are waited for inside the group (ncclGroupEnd returns once all are queued).
    std::vector<ncclComm_t> comms(static_cast<std::size_t>(devices));
    std::vector<int> ids(static_cast<std::size_t>(devices));
    for (int d = 0; d < devices; ++d) ids[static_cast<std::size_t>(d)] = d;
    check_nccl(ncclCommInitAll(comms.data(), devices, ids.data()), "ncclCommInitAll");
    std::vector<void*> bufs(static_cast<std::size_t>(devices), nullptr);
    std::vector<cudaStream_t> streams(static_cast<std::size_t>(devices), nullptr);
    for (int d = 0; d < devices; ++d) {
      select_device(d);
      const auto i = static_cast<std::size_t>(d);
      if (d == 0) {
        bufs[i] = a;
        streams[i] = stream;
      } else {
        check(cudaMalloc(&bufs[i], bytes), "cudaMalloc");
        check(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking), "cudaStreamCreate");
      }
    }
    select_device(0);
    const std::size_t floats = bytes / sizeof(float);
    const double seconds = median_seconds(stream, repetitions, [&] {
      check_nccl(ncclGroupStart(), "ncclGroupStart");
      for (std::size_t i = 0; i < comms.size(); ++i)
        check_nccl(
            ncclAllReduce(bufs[i], bufs[i], floats, ncclFloat, ncclSum, comms[i], streams[i]),
            "ncclAllReduce");
      check_nccl(ncclGroupEnd(), "ncclGroupEnd");
      for (std::size_t i = 1; i < streams.size(); ++i) {
        select_device(static_cast<int>(i));
        check(cudaStreamSynchronize(streams[i]), "cudaStreamSynchronize");
      }
      select_device(0);
    });
    const double n = static_cast<double>(devices);
    out.push_back(rate("NCCL all-reduce over " + std::to_string(devices) + " GPUs (bus bandwidth)",
                       bytes, seconds, 2.0 * (n - 1.0) / n));
    for (std::size_t i = 1; i < comms.size(); ++i) {
      select_device(static_cast<int>(i));
      cudaFree(bufs[i]);
      cudaStreamDestroy(streams[i]);
    }
    for (ncclComm_t c : comms) ncclCommDestroy(c);
    select_device(0);
  }
  cudaFreeHost(host);
  cudaFree(a);
  cudaFree(b);
  cudaStreamDestroy(stream);
  return out;
}

}  // namespace recycle::executor::cuda
