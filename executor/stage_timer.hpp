// Timing one stage's F, I, W and optimizer step, for every backend (measure_stage for the cpu
// backend, the cuda backend's measurement): medians of `repetitions` runs after a warm-up, under
// the load of the run they predict (measure.hpp's TimingLoad): as many micro-batches in flight as
// the schedule's workers hold at most, while other threads run the same operations on copies of
// the stage, kept on the cores the run's workers are kept on when they share them.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "core/parallel.hpp"
#include "executor/cpu_pin.hpp"
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
/// runs F for `load.in_flight` micro-batches, then I and W for each in turn, then the step: the
/// memory a worker holding that many micro-batches at once touches between an F and its W (the
/// schedule's peak; 1 times each micro-batch's F, I and W back to back). F, I, W and the loss are
/// the medians over at least `repetitions` of each after a warm-up round, the step the median
/// over the rounds. Timed on the calling thread by the wall clock, or, when `load.pin_cpus` keeps
/// the threads on cores, on a thread of its own kept on pin_cpus[0] by its processor time.
template <class Chunk, class Tensor, class MakeStage, class Loss>
MeasuredStage time_stage(MakeStage&& make_stage, const Tensor& input, const Tensor& target,
                         Loss&& loss, std::int32_t repetitions, const TimingLoad& load) {
  const auto held = static_cast<std::size_t>(std::max(1, load.in_flight));
  const bool pinned = !load.pin_cpus.empty();
  const auto pin = [&](std::int32_t k) {
    if (pinned) pin_to(load.pin_cpus[static_cast<std::size_t>(k) % load.pin_cpus.size()]);
  };
  std::atomic<bool> done{false};
  std::mutex failure;
  std::exception_ptr failed;  // the first thread's failure, rethrown once every thread is joined
  const auto guarded = [&](auto&& body) {
    try {
      body();
    } catch (...) {
      const std::lock_guard lock(failure);
      if (!failed) failed = std::current_exception();
      done = true;
    }
  };
  std::vector<std::thread> others;
  const auto start = [&](auto&& body) {
    try {
      others.emplace_back(std::forward<decltype(body)>(body));
    } catch (const std::system_error& e) {
      done = true;
      for (std::thread& t : others) t.join();
      refuse_thread(others.size(), static_cast<std::size_t>(load.concurrent), e, "validate");
    }
  };
  for (std::int32_t k = 1; k < load.concurrent; ++k) {
    start([&, k] {
      guarded([&] {
        pin(k);
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
    });
  }
  std::vector<Nanos> f, i, w, opt, losses;
  const auto now = [pinned]() -> Nanos {
    if (pinned) return thread_cpu_ns();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  const auto timed = [&] {
    pin(0);
    auto stage = make_stage();
    const std::int32_t rounds = timed_rounds(repetitions, load.in_flight);
    for (std::int32_t r = 0; r <= rounds; ++r) {
      const bool counted = r > 0;  // round 0 is the warm-up
      std::vector<Chunk> chunks(held);
      std::vector<Tensor> gradients(held);
      for (std::size_t m = 0; m < held; ++m) {
        const Nanos t = now();
        const Tensor out = stage.forward(input, chunks[m]);
        if (counted) f.push_back(now() - t);
        const Nanos u = now();
        loss(out, target, gradients[m]);
        if (counted) losses.push_back(now() - u);
      }
      for (std::size_t m = 0; m < held; ++m) {
        Nanos t = now();
        const Tensor dx = stage.backward_input(gradients[m], chunks[m]);
        if (counted) i.push_back(now() - t);
        t = now();
        stage.backward_weight(chunks[m]);
        if (counted) w.push_back(now() - t);
      }
      const Nanos t = now();
      stage.step(0.0, 1);  // a step of size 0: the same work, the same weights
      if (counted) opt.push_back(now() - t);
    }
  };
  if (pinned) {
    start([&] { guarded(timed); });  // the caller's own thread stays where it was
    others.back().join();
    others.pop_back();
  } else {
    guarded(timed);
  }
  done = true;
  for (std::thread& t : others) t.join();
  if (failed) std::rethrow_exception(failed);
  return {{median_of(f), median_of(i), median_of(w)}, median_of(opt), median_of(losses)};
}

}  // namespace recycle::executor
