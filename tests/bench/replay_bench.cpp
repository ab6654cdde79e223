// Job replay benchmarks (DESIGN.md targets), each input named in the benchmark's label:
//  - 30 days of 16,384 GPUs (TP 8, PP 16, DP 128 on H100 with full recomputation) at the Llama 3
//    failure rate (the llama3-like preset over 2,048 nodes), every policy: target < 10 s on one
//    core, < 2 GB, for GPT-3 175B, Llama 3 70B and Llama 3 405B at m = 16 and m = 64
//    micro-batches per pipeline (global batch 2,048 and 8,192), seeds 1-3;
//  - Bamboo's p3 spot trace (32 nodes, 11.3 h; Bamboo's own simulator takes 0.24 s for one
//    policy), each policy alone (target < 0.24 s) and every policy in one replay, for GPT-3 1.3B
//    in 2 pipelines of 12 stages (m 16) and GPT-3 2.7B in 8 pipelines of 4 stages (global batch
//    256, m 32).
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/job_model.hpp"
#include "profiles/job.hpp"
#include "sim/replay/replay.hpp"
#include "traces/generator.hpp"
#include "traces/import.hpp"
#include "traces/presets.hpp"

namespace {

using namespace recycle;

void replay(benchmark::State& state, const nlohmann::json& spec, const traces::Trace& trace,
            std::vector<sim::PolicyKind> policies, std::string label) {
  const profiles::Job job = profiles::job_from_json(spec, "bench job");
  const planner::JobModel model = planner::job_model(job);
  sim::ReplayOptions options;
  options.policies = std::move(policies);
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
  state.counters["goodput"] = result.policies.front().goodput;
  state.SetLabel(label);
}

/// The 16k-GPU jobs: (model, micro-batches per pipeline) by index.
constexpr std::array<const char*, 3> kLargeModels{"gpt3-175b", "llama3-70b", "llama3-405b"};

void BM_Replay30Days16k(benchmark::State& state) {
  const char* name = kLargeModels.at(static_cast<std::size_t>(state.range(0)));
  const std::int64_t m = state.range(1);
  traces::GeneratorOptions options = traces::find_generator_preset("llama3-like", "").options;
  options.days = 30;
  options.seed = static_cast<std::uint64_t>(state.range(2));
  const traces::Trace trace = traces::generate_trace(options);
  const nlohmann::json spec = {{"model", name},
                               {"hardware", "h100-80g"},
                               {"parallel",
                                {{"tp", 8},
                                 {"pp", 16},
                                 {"dp", 128},
                                 {"global_batch", 128 * m},
                                 {"sequence_parallel", true},
                                 {"recompute", "full"}}}};
  replay(state, spec, trace, sim::all_policies(),
         std::string(name) + " m" + std::to_string(m) + " seed" + std::to_string(options.seed) +
             " every policy");
}
BENCHMARK(BM_Replay30Days16k)
    ->ArgsProduct({{0, 1, 2}, {16, 64}, {1, 2, 3}})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

/// Bamboo's p3 trace under each policy alone (range 1: its index in sim::all_policies()) for the
/// job of range 0: GPT-3 1.3B, PP 12 x DP 2, m 16; GPT-3 2.7B, PP 4 x DP 8, global batch 256.
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
  const bool small = state.range(0) == 0;
  const nlohmann::json parallel =
      small ? nlohmann::json{{"tp", 1}, {"pp", 12}, {"dp", 2}, {"global_batch", 32}}
            : nlohmann::json{{"tp", 1}, {"pp", 4}, {"dp", 8}, {"global_batch", 256}};
  const nlohmann::json spec = {
      {"model", small ? "gpt3-1.3b" : "gpt3-2.7b"},
      {"hardware", "a100-40g"},
      {"parallel", parallel},
      {"cluster", {{"nodes", 32}, {"gpus_per_node", 1}}},
      {"checkpoint", {{"interval_s", 1800}, {"write_s", 30}, {"load_s", 60}}}};
  const std::string job = small ? "gpt3-1.3b pp12 dp2 m16 " : "gpt3-2.7b pp4 dp8 m32 ";
  const auto& all = sim::all_policies();
  const auto which = static_cast<std::size_t>(state.range(1));
  if (which == all.size()) {
    replay(state, spec, loaded.trace, all, job + "every policy");
    return;
  }
  const sim::PolicyKind policy = all.at(which);
  replay(state, spec, loaded.trace, {policy}, job + std::string(sim::to_string(policy)));
}
// range(1): a policy's index in sim::all_policies(), or their count for every policy in one replay.
BENCHMARK(BM_ReplayBambooP3)
    ->ArgsProduct({{0, 1},
                   benchmark::CreateDenseRange(
                       0, static_cast<std::int64_t>(recycle::sim::all_policies().size()), 1)})
    ->Unit(benchmark::kMillisecond);

}  // namespace
