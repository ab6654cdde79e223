#include "executor/measure.hpp"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace recycle::executor {

namespace {

Nanos median(std::vector<Nanos> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

MeasuredStage measure_stage(const StageShape& shape, std::int32_t repetitions) {
  openblas_set_num_threads(1);
  StageParams params(shape, 0, 1);
  const std::vector<float> input = synthetic_input(shape, 1, 0, 0, 0);
  const std::vector<float> target = synthetic_target(shape, 1, 0, 0, 0);
  std::vector<Nanos> f, i, w, opt;
  using Clock = std::chrono::steady_clock;
  const auto since = [](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
  };
  for (std::int32_t r = 0; r <= std::max(1, repetitions); ++r) {
    Chunk chunk;
    auto t = Clock::now();
    const std::vector<float> out = params.forward(input, chunk);
    const Nanos tf = since(t);
    std::vector<float> gradient;
    StageParams::loss(out, target, gradient);
    t = Clock::now();
    const std::vector<float> dx = params.backward_input(gradient, chunk);
    const Nanos ti = since(t);
    t = Clock::now();
    params.backward_weight(chunk);
    const Nanos tw = since(t);
    t = Clock::now();
    params.step(0.0, 1);  // a step of size 0: the same work, the same weights
    const Nanos to = since(t);
    if (r == 0) continue;  // warm-up
    f.push_back(tf);
    i.push_back(ti);
    w.push_back(tw);
    opt.push_back(to);
  }
  return {{median(f), median(i), median(w)}, median(opt)};
}

}  // namespace recycle::executor
