#include "executor/cuda/gpu_sharing.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <latch>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "executor/cuda/cuda_stage.hpp"
#include "executor/cuda/device_tensor.hpp"

namespace recycle::executor::cuda {
namespace {

/// Seconds `n` threads take to run `rounds` micro-batches each (measure_gpu_sharing).
double wall_seconds(const StageShape& shape, int device, std::int32_t n, std::int32_t rounds) {
  std::latch ready(n);
  std::latch go(1);
  std::mutex failure;
  std::exception_ptr failed;
  std::vector<std::thread> threads;
  const auto launch = [&](std::int32_t k, auto&& body) {
    try {
      threads.emplace_back(std::forward<decltype(body)>(body));
    } catch (const std::system_error& e) {
      ready.count_down(n - k);  // the threads never started will not count themselves
      go.count_down();
      for (std::thread& t : threads) t.join();
      refuse_thread(threads.size(), static_cast<std::size_t>(n), e, "--backend cuda");
    }
  };
  for (std::int32_t k = 0; k < n; ++k) {
    launch(k, [&, k] {
      bool counted = false;
      try {
        select_device(device);
        const Lane lane(device);
        CudaStage stage(lane, shape, 0, static_cast<std::uint64_t>(k) + 1);
        const DeviceTensor input = DeviceTensor::upload(synthetic_input(shape, 1, 0, k, 0), device);
        const DeviceTensor target =
            DeviceTensor::upload(synthetic_target(shape, 1, 0, k, 0), device);
        DeviceTensor gradient;
        const auto microbatch = [&](bool first) {
          DeviceChunk chunk;
          const DeviceTensor out = stage.forward(input, chunk);
          lane.finish();
          if (first) static_cast<void>(CudaStage::loss(lane, out, target, gradient));
          static_cast<void>(stage.backward_input(gradient, chunk));
          lane.finish();
          stage.backward_weight(chunk);
          lane.finish();
        };
        microbatch(true);
        counted = true;
        ready.count_down();
        go.wait();
        for (std::int32_t r = 0; r < rounds; ++r) microbatch(false);
      } catch (...) {
        const std::lock_guard lock(failure);
        if (!failed) failed = std::current_exception();
        if (!counted) ready.count_down();
      }
    });
  }
  ready.wait();
  const auto start = std::chrono::steady_clock::now();
  go.count_down();
  for (std::thread& t : threads) t.join();
  const auto end = std::chrono::steady_clock::now();
  if (failed) std::rethrow_exception(failed);
  return std::chrono::duration<double>(end - start).count();
}

}  // namespace

std::vector<double> measure_gpu_sharing(const StageShape& shape, int device, std::int32_t streams,
                                        std::int32_t rounds) {
  RECYCLE_ASSERT(streams >= 1 && rounds >= 1, "a stream and a round at least");
  std::vector<double> out{1.0};
  const double alone = wall_seconds(shape, device, 1, rounds);
  for (std::int32_t n = 2; n <= streams; ++n)
    out.push_back(n * alone / wall_seconds(shape, device, n, rounds));
  return out;
}

}  // namespace recycle::executor::cuda
