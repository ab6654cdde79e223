// Timing one stage's F, I, W and optimizer step, for every backend (measure_stage for the cpu
// backend, the cuda backend's measurement): medians of `repetitions` runs after a warm-up, with
// as many micro-batches in flight as the schedule's workers hold at most, while `concurrent - 1`
// other threads run the same operations on copies of the stage (the load of a run where that
// many workers compute at once and share the memory system or the device).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "executor/footprint.hpp"
#include "executor/measure.hpp"

namespace recycle::executor {

/// The median of `v` (not empty).
[[nodiscard]] inline Nanos median_of(std::vector<Nanos> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// `make_stage()` returns a fresh stage (called on the thread that uses it); `loss(out, target,
/// gradient)` is the last stage's loss; each operation has finished when it returns. Each round
/// runs F for `in_flight` micro-batches, then I and W for each in turn, then the step: the
/// memory a worker holding that many micro-batches at once touches between an F and its W (the
/// schedule's peak; 1 times each micro-batch's F, I and W back to back). F, I and W are the
/// medians over at least `repetitions` of each after a warm-up round, the step the median over
/// the rounds.
template <class Chunk, class Tensor, class MakeStage, class Loss>
MeasuredStage time_stage(MakeStage&& make_stage, const Tensor& input, const Tensor& target,
                         Loss&& loss, std::int32_t repetitions, std::int32_t concurrent,
                         std::int32_t in_flight = 1) {
  const auto held = static_cast<std::size_t>(std::max(1, in_flight));
  std::atomic<bool> done{false};
  std::vector<std::thread> load;
  for (std::int32_t k = 1; k < concurrent; ++k) {
    load.emplace_back([&] {
      auto copy = make_stage();
      while (!done.load(std::memory_order_relaxed)) {
        std::vector<Chunk> chunks(held);
        std::vector<Tensor> gradients(held);
        for (std::size_t m = 0; m < held; ++m)
          loss(copy.forward(input, chunks[m]), target, gradients[m]);
        for (std::size_t m = 0; m < held; ++m) {
          static_cast<void>(copy.backward_input(gradients[m], chunks[m]));
          copy.backward_weight(chunks[m]);
        }
        copy.step(0.0, 1);
      }
    });
  }
  auto stage = make_stage();
  std::vector<Nanos> f, i, w, opt;
  using Clock = std::chrono::steady_clock;
  const auto since = [](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
  };
  const std::int32_t rounds = timed_rounds(repetitions, in_flight);
  for (std::int32_t r = 0; r <= rounds; ++r) {
    const bool counted = r > 0;  // round 0 is the warm-up
    std::vector<Chunk> chunks(held);
    std::vector<Tensor> gradients(held);
    for (std::size_t m = 0; m < held; ++m) {
      const auto t = Clock::now();
      const Tensor out = stage.forward(input, chunks[m]);
      if (counted) f.push_back(since(t));
      loss(out, target, gradients[m]);
    }
    for (std::size_t m = 0; m < held; ++m) {
      auto t = Clock::now();
      const Tensor dx = stage.backward_input(gradients[m], chunks[m]);
      if (counted) i.push_back(since(t));
      t = Clock::now();
      stage.backward_weight(chunks[m]);
      if (counted) w.push_back(since(t));
    }
    const auto t = Clock::now();
    stage.step(0.0, 1);  // a step of size 0: the same work, the same weights
    if (counted) opt.push_back(since(t));
  }
  done = true;
  for (std::thread& t : load) t.join();
  return {{median_of(f), median_of(i), median_of(w)}, median_of(opt)};
}

}  // namespace recycle::executor
