// Simulator benchmarks (DESIGN.md, "Performance targets"):
//  - one iteration of 16,384 GPUs (TP 8 -> 2,048 workers: PP 16, DP 128, 64 micro-batches, ZB-H1,
//    a profile with communication) in < 100 ms and < 200 MB;
//  - cost linear in the number of actions: DP 8, 32, 128, 512, 2048 (16x and 4x smaller and
//  larger).
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include "planner/generators.hpp"
#include "planner/recycle_planner.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"

namespace {

using namespace recycle;

/// A GPT-3-like stage on 8-GPU H100 nodes with TP 8 (one worker per node): 20 ms F, 20 ms I,
/// 15 ms W per micro-batch, 5 ms optimizer, 48 MB activations sent between stages over 8 x 50 GB/s,
/// 2.7 GB of gradients all-reduced per stage across 128 nodes.
profiles::Profile large_profile(std::int32_t pp) {
  profiles::Profile p;
  p.name = "bench: GPT-3-like, TP 8, H100 nodes";
  p.tensor_parallel = 8;
  p.stages.assign(static_cast<std::size_t>(pp),
                  profiles::StageProfile{20'000'000, 20'000'000, 15'000'000, 5'000'000,
                                         2'000'000'000, 48'000'000, 2'700'000'000, 0});
  p.hardware = {8, 3.6e12, 4e11, 3'000, 10'000, 80'000'000'000};
  return p;
}

std::int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux: kilobytes
}

/// One iteration of `schedule` on the large profile, from the compute-only schedule (lowering
/// included) to the metrics.
void simulate_once(benchmark::State& state, const planner::Schedule& schedule, bool fold) {
  const planner::CostModel model =
      planner::CostModel::from_profile(large_profile(schedule.layout.pp), schedule.layout, "bench");
  std::size_t actions = 0;
  std::uint64_t events = 0;
  for (auto _ : state) {
    const sim::SimRun run =
        sim::simulate(schedule, model, {.iterations = 1, .fold_pipelines = fold});
    const sim::Metrics metrics = sim::compute_metrics(run);
    benchmark::DoNotOptimize(metrics.iteration_time);
    actions = run.timeline.actions.size();
    events = run.timeline.events;
  }
  state.SetComplexityN(static_cast<std::int64_t>(actions));
  state.SetItemsProcessed(state.iterations() *
                          static_cast<std::int64_t>(actions));  // actions per second
  state.counters["workers"] = static_cast<double>(schedule.layout.workers());
  state.counters["actions"] = static_cast<double>(actions);
  state.counters["events"] = static_cast<double>(events);
  state.counters["peak_rss_MB"] = static_cast<double>(peak_rss_bytes()) / 1e6;
}

planner::Schedule zb_h1(std::int32_t dp) {
  planner::GeneratorOptions gen;
  gen.layout = planner::Layout{dp, 16, 64, 1};
  return planner::generate_fault_free("zb-h1", gen);
}

/// One iteration of ZB-H1 at PP 16, 64 micro-batches, DP = range(0), as `recycle simulate` runs
/// it: identical pipelines folded (sim/pipeline_fold.hpp), so a fault-free schedule simulates one.
void BM_SimulateZbH1(benchmark::State& state) {
  simulate_once(state, zb_h1(static_cast<std::int32_t>(state.range(0))), true);
}
BENCHMARK(BM_SimulateZbH1)
    ->Arg(8)
    ->Arg(32)
    ->Arg(128)  // the 16,384-GPU configuration
    ->Arg(512)
    ->Arg(2'048)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

/// The same with every pipeline simulated: the engine's cost per action.
void BM_SimulateZbH1Whole(benchmark::State& state) {
  simulate_once(state, zb_h1(static_cast<std::int32_t>(state.range(0))), false);
}
BENCHMARK(BM_SimulateZbH1Whole)
    ->Arg(8)
    ->Arg(32)
    ->Arg(128)
    ->Arg(512)
    ->Arg(2'048)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

/// One iteration of the ReCycle plan for PP 16 x DP 128 with 8 failures spread over the stages
/// (the plan of planner_bench's BM_PlanRecycle8Failures, made once): the pipelines that lost a
/// worker or take re-routed micro-batches run on their own, the others fold. range(0): fold.
void BM_SimulateRecycle8Failures(benchmark::State& state) {
  planner::RecycleOptions options;
  options.layout = planner::Layout{128, 16, 64, 1};
  options.failed = {{3, 0}, {17, 2}, {29, 5}, {40, 7}, {58, 9}, {77, 11}, {96, 13}, {120, 15}};
  options.model = planner::CostModel::from_profile(large_profile(16), options.layout, "bench");
  const planner::Schedule plan = planner::plan_recycle(options).schedule;
  simulate_once(state, plan, state.range(0) != 0);
}
BENCHMARK(BM_SimulateRecycle8Failures)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

}  // namespace
