// Planner benchmarks: fault-free generation and lowering at the 16,384-GPU scale of DESIGN.md
// (TP 8 -> 2,048 workers: PP 16, DP 128, 64 micro-batches).
#include <benchmark/benchmark.h>

#include "planner/generators.hpp"
#include "planner/language/lower.hpp"
#include "planner/recycle_planner.hpp"

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

namespace {

// DESIGN.md target: a ReCycle plan for PP 16 x DP 128, 64 micro-batches, 8 failures spread over
// stages, in under 100 ms.
void BM_PlanRecycle8Failures(benchmark::State& state) {
  recycle::planner::RecycleOptions options;
  options.layout = Layout{128, 16, 64, 1};
  options.failed = {{3, 0}, {17, 2}, {29, 5}, {40, 7}, {58, 9}, {77, 11}, {96, 13}, {120, 15}};
  for (auto _ : state) benchmark::DoNotOptimize(recycle::planner::plan_recycle(options));
}
BENCHMARK(BM_PlanRecycle8Failures)->Unit(benchmark::kMillisecond);

void BM_PlanRecycleFaultFree(benchmark::State& state) {
  recycle::planner::RecycleOptions options;
  options.layout = Layout{128, 16, 64, 1};
  for (auto _ : state) benchmark::DoNotOptimize(recycle::planner::plan_recycle(options));
}
BENCHMARK(BM_PlanRecycleFaultFree)->Unit(benchmark::kMillisecond);

// The order search at its budget: PP 8 x DP 8, 8 micro-batches, worker (3, 2) failed (1,536
// actions; the search gets from 36 to 35 units but not to its lower bound, so it spends the whole
// budget).
void BM_PlanRecycleSearch(benchmark::State& state) {
  recycle::planner::RecycleOptions options;
  options.layout = Layout{8, 8, 8, 1};
  options.failed = {{3, 2}};
  options.search_work = state.range(0);
  for (auto _ : state) benchmark::DoNotOptimize(recycle::planner::plan_recycle(options));
}
BENCHMARK(BM_PlanRecycleSearch)
    ->Arg(0)
    ->Arg(recycle::planner::kDefaultSearchWork)
    ->Unit(benchmark::kMillisecond);

}  // namespace
