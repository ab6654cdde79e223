// Job replay benchmarks (DESIGN.md targets):
//  - 30 days of 16,384 GPUs (TP 8, PP 16, DP 128; Llama 3 405B on H100 with full recomputation,
//    the configuration of that size whose memory fits the profile) at the Llama 3 failure rate
//    (the llama3-like preset over 2,048 nodes, seeds 1-3), every policy: target < 10 s, < 2 GB;
//  - Bamboo's p3 spot trace (32 nodes, 11.3 h; Bamboo's own simulator takes 0.55 s of Python
//    for one policy) under every policy, GPT-3 1.3B in 2 pipelines of 12 stages.
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <string>

#include <nlohmann/json.hpp>

#include "planner/job_model.hpp"
#include "profiles/job.hpp"
#include "sim/replay/replay.hpp"
#include "traces/generator.hpp"
#include "traces/import.hpp"
#include "traces/presets.hpp"

namespace {

using namespace recycle;

void replay_all(benchmark::State& state, const nlohmann::json& spec, const traces::Trace& trace) {
  const profiles::Job job = profiles::job_from_json(spec, "bench job");
  const planner::JobModel model = planner::job_model(job);
  sim::ReplayOptions options;
  options.policies = sim::all_policies();
  sim::ReplayResult result;
  for (auto _ : state) {
    result = sim::replay(model, trace, options);
    benchmark::DoNotOptimize(result.policies.data());
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["peak_rss_MB"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  state.counters["configurations"] = static_cast<double>(result.configurations);
  state.counters["failures"] = static_cast<double>(result.policies.front().failures);
  state.counters["recycle_goodput"] = result.policies.front().goodput;
}

void BM_Replay30Days16k(benchmark::State& state) {
  traces::GeneratorOptions options = traces::find_generator_preset("llama3-like", "").options;
  options.days = 30;
  options.seed = static_cast<std::uint64_t>(state.range(0));
  const traces::Trace trace = traces::generate_trace(options);
  const nlohmann::json spec = {{"model", "llama3-405b"},
                               {"hardware", "h100-80g"},
                               {"parallel",
                                {{"tp", 8},
                                 {"pp", 16},
                                 {"dp", 128},
                                 {"global_batch", 2048},
                                 {"sequence_parallel", true},
                                 {"recompute", "full"}}}};
  replay_all(state, spec, trace);
}
BENCHMARK(BM_Replay30Days16k)->Arg(1)->Arg(2)->Arg(3)->Iterations(1)->Unit(benchmark::kSecond);

void BM_ReplayBambooP3(benchmark::State& state) {
  const std::string path =
      std::string(RECYCLE_SOURCE_DIR) + "/../shared/traces-raw/bamboo-spot/p3-trace.csv";
  traces::LoadedTrace loaded;
  try {
    loaded = traces::import_trace(traces::ImportFormat::kBamboo, path, {});
  } catch (const std::exception&) {
    state.SkipWithError("../shared/traces-raw/bamboo-spot/p3-trace.csv is not there");
    return;
  }
  const nlohmann::json spec = {
      {"model", "gpt3-1.3b"},
      {"hardware", "a100-40g"},
      {"parallel", {{"tp", 1}, {"pp", 12}, {"dp", 2}, {"global_batch", 32}}},
      {"cluster", {{"nodes", 32}, {"gpus_per_node", 1}}},
      {"checkpoint", {{"interval_s", 1800}, {"write_s", 30}, {"load_s", 60}}}};
  replay_all(state, spec, loaded.trace);
}
BENCHMARK(BM_ReplayBambooP3)->Unit(benchmark::kMillisecond);

}  // namespace
