// Planner benchmarks: fault-free generation and lowering at the 16,384-GPU scale of DESIGN.md
// (TP 8 -> 2,048 workers: PP 16, DP 128, 64 micro-batches).
#include <benchmark/benchmark.h>

#include "planner/generators.hpp"
#include "planner/lower.hpp"

namespace {

using namespace recycle::planner;

GeneratorOptions large_layout() {
  GeneratorOptions options;
  options.layout = Layout{128, 16, 64, 1};
  return options;
}

void BM_GenerateZbH1(benchmark::State& state) {
  const GeneratorOptions options = large_layout();
  for (auto _ : state) benchmark::DoNotOptimize(generate_fault_free("zb-h1", options));
}
BENCHMARK(BM_GenerateZbH1)->Unit(benchmark::kMillisecond);

void BM_GenerateZbH2(benchmark::State& state) {
  const GeneratorOptions options = large_layout();
  for (auto _ : state) benchmark::DoNotOptimize(generate_fault_free("zb-h2", options));
}
BENCHMARK(BM_GenerateZbH2)->Unit(benchmark::kMillisecond);

void BM_Lower(benchmark::State& state) {
  const Schedule schedule = generate_fault_free("zb-h1", large_layout());
  for (auto _ : state) benchmark::DoNotOptimize(lower(schedule));
}
BENCHMARK(BM_Lower)->Unit(benchmark::kMillisecond);

}  // namespace
