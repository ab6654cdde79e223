// Timing one stage's F, I, W and optimizer step, for every backend (measure_stage for the cpu
// backend, the cuda backend's measurement): the median of `repetitions` runs after one warm-up,
// while `concurrent - 1` other threads run the same operations on copies of the stage (the load
// of a run where that many workers compute at once and share the memory system or the device).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "executor/measure.hpp"

namespace recycle::executor {

/// The median of `v` (not empty).
[[nodiscard]] inline Nanos median_of(std::vector<Nanos> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// `make_stage()` returns a fresh stage (called on the thread that uses it); `loss(out, target,
/// gradient)` is the last stage's loss; each operation has finished when it returns.
template <class Chunk, class Tensor, class MakeStage, class Loss>
MeasuredStage time_stage(MakeStage&& make_stage, const Tensor& input, const Tensor& target,
                         Loss&& loss, std::int32_t repetitions, std::int32_t concurrent) {
  std::atomic<bool> done{false};
  std::vector<std::thread> load;
  for (std::int32_t k = 1; k < concurrent; ++k) {
    load.emplace_back([&] {
      auto copy = make_stage();
      while (!done.load(std::memory_order_relaxed)) {
        Chunk chunk;
        Tensor gradient;
        loss(copy.forward(input, chunk), target, gradient);
        static_cast<void>(copy.backward_input(gradient, chunk));
        copy.backward_weight(chunk);
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
  for (std::int32_t r = 0; r <= std::max(1, repetitions); ++r) {
    Chunk chunk;
    auto t = Clock::now();
    const Tensor out = stage.forward(input, chunk);
    const Nanos tf = since(t);
    Tensor gradient;
    loss(out, target, gradient);
    t = Clock::now();
    const Tensor dx = stage.backward_input(gradient, chunk);
    const Nanos ti = since(t);
    t = Clock::now();
    stage.backward_weight(chunk);
    const Nanos tw = since(t);
    t = Clock::now();
    stage.step(0.0, 1);  // a step of size 0: the same work, the same weights
    const Nanos to = since(t);
    if (r == 0) continue;  // warm-up
    f.push_back(tf);
    i.push_back(ti);
    w.push_back(tw);
    opt.push_back(to);
  }
  done = true;
  for (std::thread& t : load) t.join();
  return {{median_of(f), median_of(i), median_of(w)}, median_of(opt)};
}

}  // namespace recycle::executor
