// Failure-trace benchmarks at the scale of DESIGN.md: a year of events for 16,384 nodes, at the
// Llama 3 rate (3.79 per 1,000 node-days, ~22,700 failures) and at cloud-bad's 15 (~89,700).
// Target: reading or generating it in under 1 s.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "core/file_io.hpp"
#include "traces/generator.hpp"
#include "traces/native_csv.hpp"
#include "traces/stats.hpp"

namespace {

using namespace recycle::traces;

/// state.range(0) is the rate in failures per 1,000 node-days.
GeneratorOptions year(const benchmark::State& state) {
  GeneratorOptions o;
  o.nodes = 16'384;
  o.days = 365;
  o.rate = static_cast<double>(state.range(0));
  o.tbf = TbfModel::parse("weibull:0.62", "--tbf");
  o.burst = BurstModel::parse("0.05:2", "--burst");
  o.causes = CauseMix::parse("llama3", "--causes");
  o.seed = 1;
  return o;
}

void BM_GenerateYear16k(benchmark::State& state) {
  const GeneratorOptions options = year(state);
  std::size_t events = 0;
  for (auto _ : state) {
    const Trace trace = generate_trace(options);
    events = trace.events().size();
    benchmark::DoNotOptimize(trace.events().data());
  }
  state.counters["events"] = static_cast<double>(events);
}
BENCHMARK(BM_GenerateYear16k)->Arg(4)->Arg(15)->Unit(benchmark::kMillisecond);

void BM_WriteYear16k(benchmark::State& state) {
  const Trace trace = generate_trace(year(state));
  for (auto _ : state) benchmark::DoNotOptimize(format_native_csv(trace));
}
BENCHMARK(BM_WriteYear16k)->Arg(4)->Arg(15)->Unit(benchmark::kMillisecond);

void BM_ReadYear16k(benchmark::State& state) {
  const std::string path =
      std::string(P_tmpdir) + "/recycle_traces_bench_" + std::to_string(state.range(0)) + ".csv";
  const std::string text = format_native_csv(generate_trace(year(state)));
  recycle::write_text_file(path, text);
  for (auto _ : state) benchmark::DoNotOptimize(read_native_csv(path, {}).trace.events().data());
  state.counters["MB"] = static_cast<double>(text.size()) / 1e6;
  std::remove(path.c_str());
}
BENCHMARK(BM_ReadYear16k)->Arg(4)->Arg(15)->Unit(benchmark::kMillisecond);

void BM_StatsYear16k(benchmark::State& state) {
  const Trace trace = generate_trace(year(state));
  for (auto _ : state) benchmark::DoNotOptimize(compute_stats(trace).failures);
}
BENCHMARK(BM_StatsYear16k)->Arg(4)->Arg(15)->Unit(benchmark::kMillisecond);

}  // namespace
