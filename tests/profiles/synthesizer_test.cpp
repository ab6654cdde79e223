// The synthesizer against hand formulas: on an ideal GPU (every product at its peak, free memory
// traffic and links) each phase's time is its FLOPs over the peak, so F, I and W follow from
// Narayanan et al.'s counts (profiles/flops.hpp); bytes follow from the parameter counts and
// Korthikanti et al.'s activation formulas.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json.hpp"
#include "profiles/activations.hpp"
#include "profiles/job.hpp"
#include "profiles/shipped.hpp"
#include "profiles/synthesizer.hpp"
#include "tests/profiles/test_helpers.hpp"

using recycle::Nanos;
using recycle::profiles::GpuSpec;
using recycle::profiles::ParallelConfig;
using recycle::profiles::Recompute;
using recycle::profiles::testing::shipped;

namespace {

constexpr double kPeak = 1e15;

/// Products at the peak, memory and links that cost nothing.
GpuSpec ideal_gpu() {
  GpuSpec g;
  g.name = "ideal";
  for (double& f : g.matmul_flops) f = kPeak;
  g.memory_bytes = std::int64_t{1} << 45;
  g.memory_bandwidth = 1e300;
  g.gpus_per_node = 8;
  g.intra_node_bandwidth = 1e300;
  g.inter_node_bandwidth = 1e300;
  g.efficiency = {1, 0, 1, 1, 1};
  return g;
}

ParallelConfig three_stages() {
  ParallelConfig p;
  p.pp = 3;
  p.global_batch = 8;
  p.flash_attention = false;
  return p;
}

Nanos seconds_of(double flops) {
  return recycle::to_nanos(flops / kPeak);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const recycle::InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("on an ideal GPU a middle stage's F, I, W are its FLOPs over the peak") {
  const auto gpt = shipped("gpt3-1.3b");  // 24 layers: 8 per stage
  const auto s = synthesize(gpt, ideal_gpu(), three_stages(), "job.json");
  REQUIRE(s.layers == std::vector<std::int64_t>{8, 8, 8});
  const auto& mid = s.profile.stages[1];
  const double layer = static_cast<double>(recycle::profiles::layer_forward_flops(gpt));
  const double core = static_cast<double>(recycle::profiles::attention_core_flops(gpt));
  // Per layer: F = the forward's FLOPs; W = the weight products' (forward minus attention core);
  // I = the weight products' input gradients plus the attention core's backward (twice it).
  CHECK(std::llabs(mid.forward - 8 * seconds_of(layer)) <= 8);
  CHECK(std::llabs(mid.backward_weight - 8 * seconds_of(layer - core)) <= 8);
  CHECK(std::llabs(mid.backward_input - 8 * seconds_of(layer - core + 2 * core)) <= 8);
  // I + W = the backward = twice the forward (Narayanan et al., section 5.1).
  CHECK(std::llabs(mid.backward_input + mid.backward_weight - 2 * mid.forward) <= 16);
  // One layer's costs, as `profile measure --job` compares them, are the same counts for one.
  CHECK(std::llabs(s.layer_forward - seconds_of(layer)) <= 1);
  CHECK(std::llabs(s.layer_backward_weight - seconds_of(layer - core)) <= 1);
  CHECK(std::llabs(s.layer_backward_input - seconds_of(layer + core)) <= 1);
}

TEST_CASE("recomputation adds the recomputed forward to I, and W is untouched") {
  const auto gpt = shipped("gpt3-1.3b");
  ParallelConfig p = three_stages();
  const auto none = synthesize(gpt, ideal_gpu(), p, "job.json").profile.stages[1];
  p.recompute = Recompute::kFull;
  const auto full = synthesize(gpt, ideal_gpu(), p, "job.json").profile.stages[1];
  p.recompute = Recompute::kSelective;
  const auto selective = synthesize(gpt, ideal_gpu(), p, "job.json").profile.stages[1];
  const double core = static_cast<double>(recycle::profiles::attention_core_flops(gpt));
  CHECK(std::llabs(full.backward_input - none.backward_input - none.forward) <= 2);
  CHECK(std::llabs(selective.backward_input - none.backward_input - 8 * seconds_of(core)) <= 8);
  CHECK(full.backward_weight == none.backward_weight);
  CHECK(selective.forward == none.forward);
}

TEST_CASE("tensor parallelism over free links divides every stage's time by tp") {
  const auto gpt = shipped("gpt3-1.3b");  // 16 heads
  ParallelConfig p = three_stages();
  const auto one = synthesize(gpt, ideal_gpu(), p, "job.json").profile.stages[1];
  p.tp = 4;
  const auto four = synthesize(gpt, ideal_gpu(), p, "job.json").profile.stages[1];
  CHECK(std::llabs(4 * four.forward - one.forward) <= 8);
  CHECK(std::llabs(4 * four.backward_weight - one.backward_weight) <= 8);
}

TEST_CASE("a layer's tensor-parallel collectives: two ring all-reduces of its output per pass") {
  const auto gpt = shipped("gpt3-1.3b");  // hidden 2048, sequences of 2048 tokens
  GpuSpec nvlink = ideal_gpu();
  nvlink.intra_node_bandwidth = 1e11;
  ParallelConfig p = three_stages();
  const auto free_links = synthesize(gpt, ideal_gpu(), p, "job.json");
  CHECK(free_links.layer_tp_collectives == 0);
  p.tp = 4;
  const auto four = synthesize(gpt, nvlink, p, "job.json");
  // One all-reduce: 2048 tokens x 2048 x 2 bytes (bf16) = 8,388,608 bytes; a ring over 4 GPUs
  // moves 2 x 3/4 of them through each GPU's link: 125,829 ns at 1e11 B/s. Two per pass.
  CHECK(std::llabs(four.layer_tp_collectives - 2 * 125'829) <= 2);
  // F and I are the rank's arithmetic (a quarter of the whole layer's, on this GPU) plus them.
  const auto compute = synthesize(gpt, ideal_gpu(), p, "job.json");
  // (Each figure rounded to a nanosecond on its own.)
  CHECK(std::llabs(four.layer_forward - compute.layer_forward - four.layer_tp_collectives) <= 2);
  CHECK(std::llabs(four.layer_backward_input - compute.layer_backward_input -
                   four.layer_tp_collectives) <= 2);
  CHECK(four.layer_backward_weight == compute.layer_backward_weight);
  CHECK(std::llabs(4 * compute.layer_forward - free_links.layer_forward) <= 4);
}

TEST_CASE("the first stage embeds, the last computes the logits") {
  const auto gpt = shipped("gpt3-1.3b");
  const auto s = synthesize(gpt, ideal_gpu(), three_stages(), "job.json");
  const auto& last = s.profile.stages[2];
  const auto& mid = s.profile.stages[1];
  const double logits = static_cast<double>(recycle::profiles::logit_forward_flops(gpt));
  // The output layer is one more product: forward, input gradient and weight gradient of the
  // same FLOPs (memory traffic is free here).
  CHECK(std::llabs(last.forward - mid.forward - seconds_of(logits)) <= 2);
  CHECK(std::llabs(last.backward_weight - mid.backward_weight - seconds_of(logits)) <= 2);
  CHECK(std::llabs(last.backward_input - mid.backward_input - seconds_of(logits)) <= 2);
  // Every stage's total FLOPs, summed, are the model's per-sample training FLOPs.
  double total = 0;
  for (const auto& st : s.profile.stages)
    total += recycle::to_seconds(st.forward + st.backward_input + st.backward_weight);
  const double expected =
      static_cast<double>(recycle::profiles::training_flops(gpt, 1, Recompute::kNone)) / kPeak;
  CHECK(total == doctest::Approx(expected).epsilon(1e-6));
}

TEST_CASE("bytes: 16-bit weights and gradients, 12 bytes of Adam state, Korthikanti activations") {
  const auto llama = shipped("llama3-8b");  // untied: every parameter lives on one stage
  ParallelConfig p;
  p.tp = 2;
  p.pp = 4;
  p.global_batch = 8;
  p.sequence_parallel = true;
  p.recompute = Recompute::kSelective;
  const auto s = synthesize(llama, ideal_gpu(), p, "job.json");
  std::int64_t params = 0, state = 0;
  for (const auto& st : s.profile.stages) {
    params += st.param_bytes;
    state += st.optimizer_state_bytes;
  }
  CHECK(params == 2 * llama.parameters());
  CHECK(state == 12 * llama.parameters());
  recycle::profiles::ActivationOptions a;
  a.tensor_parallel = 2;
  a.sequence_parallel = true;
  a.recompute = Recompute::kSelective;
  a.flash_attention = true;
  // Stage 1 holds 8 layers and neither end of the model; a worker is both GPUs of its group.
  CHECK(s.profile.stages[1].activation_bytes ==
        8 * 2 * recycle::profiles::layer_activation_bytes(llama, a));
  // A micro-batch's output: s x h 16-bit values.
  CHECK(s.profile.stages[1].output_bytes == 8192 * 4096 * 2);
}

TEST_CASE(
    "layers split evenly, the remainder goes to middle stages, then the first, then the last") {
  using recycle::profiles::split_layers;
  CHECK(split_layers(30, 4) == std::vector<std::int64_t>{7, 8, 8, 7});
  CHECK(split_layers(10, 3) == std::vector<std::int64_t>{3, 4, 3});
  CHECK(split_layers(7, 4) == std::vector<std::int64_t>{2, 2, 2, 1});
  CHECK(split_layers(5, 2) == std::vector<std::int64_t>{3, 2});
  CHECK(split_layers(96, 8) == std::vector<std::int64_t>(8, 12));
}

TEST_CASE("configurations that cannot run are errors naming the field") {
  const auto gpt = shipped("gpt3-1.3b");  // 16 heads, 24 layers
  const GpuSpec a100 = recycle::profiles::shipped_gpu("a100-80g", "hardware");
  const auto synth = [&](ParallelConfig p) {
    return [&gpt, &a100, p] { (void)synthesize(gpt, a100, p, "job.json"); };
  };
  ParallelConfig p;
  p.global_batch = 8;
  p.tp = 16;
  CHECK(error_of(synth(p)) ==
        "job.json: parallel.tp: expected at most the GPUs of one node (8 on NVIDIA A100 SXM4 "
        "80GB (DGX A100)): tensor parallelism stays on NVLink");
  p.tp = 3;
  CHECK(error_of(synth(p)) ==
        "job.json: parallel.tp: expected a divisor of the model's heads (16), got 3");
  p.tp = 1;
  p.pp = 16;
  p.interleave = 2;
  CHECK(error_of(synth(p)) ==
        "job.json: parallel.pp: pp x interleave (32) exceeds the model's 24 layers");
  p.pp = 2;
  p.interleave = 1;
  p.dp = 3;
  CHECK(error_of(synth(p)) ==
        "job.json: parallel.global_batch: expected a multiple of dp x microbatch_size (3), got 8");
}

TEST_CASE("a synthesized profile round-trips through recycle.profile/1") {
  ParallelConfig p;
  p.tp = 8;
  p.pp = 4;
  p.global_batch = 16;
  const auto s = synthesize(shipped("llama2-13b"),
                            recycle::profiles::shipped_gpu("h100-80g", "hardware"), p, "job.json");
  const auto back =
      recycle::profiles::profile_from_json(recycle::profiles::to_json(s.profile), "round-trip");
  CHECK(recycle::profiles::to_json(back) == recycle::profiles::to_json(s.profile));
  REQUIRE(back.stages.size() == 4);
  CHECK(back.stages[3].backward_input == s.profile.stages[3].backward_input);
  CHECK(back.stages[3].optimizer_state_bytes == s.profile.stages[3].optimizer_state_bytes);
  CHECK(back.hardware.inter_node_bandwidth == s.profile.hardware.inter_node_bandwidth);
}

TEST_CASE("the distributed optimizer: a rank holds and steps 1/dp of its stage's Adam state") {
  // ZeRO stage 1 (Rajbhandari et al., SC '20, P_os): 2 + 2 + 12/dp bytes per parameter; Adam's
  // step reads and writes 28 bytes per parameter of its shard (bf16 weight and gradient, fp32
  // master weight and two moments).
  const auto llama = shipped("llama3-8b");
  const GpuSpec h100 = recycle::profiles::shipped_gpu("h100-80g", "hardware");
  ParallelConfig p;
  p.tp = 2;
  p.pp = 4;
  p.dp = 4;
  p.global_batch = 16;
  const auto whole = synthesize(llama, h100, p, "job.json");
  p.distributed_optimizer = true;
  const auto sharded = synthesize(llama, h100, p, "job.json");
  CHECK(whole.profile.optimizer_shards == 1);
  CHECK(sharded.profile.optimizer_shards == 4);
  CHECK(sharded.profile.optimizer_shard_copies == 1);
  const double hbm = h100.memory_bandwidth * h100.efficiency.memory;
  for (std::size_t s = 0; s < 4; ++s) {
    CAPTURE(s);
    const auto& st = sharded.profile.stages[s];
    const std::int64_t params = st.param_bytes / 2;
    CHECK(whole.profile.stages[s].optimizer_state_bytes == 12 * params);
    CHECK(st.optimizer_state_bytes == (12 * params + 3) / 4);
    CHECK(recycle::to_seconds(whole.profile.stages[s].optimizer) ==
          doctest::Approx(28.0 * params / 2 / hbm).epsilon(1e-6));
    CHECK(recycle::to_seconds(st.optimizer) ==
          doctest::Approx(28.0 * params / 2 / 4 / hbm).epsilon(1e-6));
    // Compute and the rest of the state are the same.
    CHECK(st.forward == whole.profile.stages[s].forward);
    CHECK(st.param_bytes == whole.profile.stages[s].param_bytes);
  }
  // A replica of the next rank's shard: twice the state and the step, and the replica's reduced
  // gradient (a GPU's share of the shard, 16-bit) over the network.
  p.shard_copies = 2;
  const auto replicated = synthesize(llama, h100, p, "job.json");
  CHECK(replicated.profile.optimizer_shard_copies == 2);
  const double network = h100.inter_node_bandwidth * h100.efficiency.network;
  for (std::size_t s = 0; s < 4; ++s) {
    CAPTURE(s);
    const auto& st = replicated.profile.stages[s];
    const double shard = static_cast<double>(st.param_bytes / 2) / 2 / 4;  // per GPU
    CHECK(st.optimizer_state_bytes == (24 * (st.param_bytes / 2) + 3) / 4);
    CHECK(recycle::to_seconds(st.optimizer) ==
          doctest::Approx(2 * 28 * shard / hbm + h100.inter_node_latency + 2 * shard / network)
              .epsilon(1e-6));
  }
  // The profile file carries the sharding.
  const auto back = recycle::profiles::profile_from_json(
      recycle::profiles::to_json(replicated.profile), "round-trip");
  CHECK(back.optimizer_shards == 4);
  CHECK(back.optimizer_shard_copies == 2);
}

TEST_CASE("a replica of each optimizer shard needs a second data-parallel rank") {
  ParallelConfig p;
  p.global_batch = 8;
  p.distributed_optimizer = true;
  p.shard_copies = 2;
  CHECK(error_of([&] {
          (void)synthesize(shipped("gpt3-1.3b"),
                           recycle::profiles::shipped_gpu("a100-80g", "hardware"), p, "job.json");
        }) ==
        "job.json: optimizer.lost_shard: \"replica\" keeps each optimizer shard on a second "
        "data-parallel rank: it needs the distributed optimizer and dp >= 2, got dp 1");
}
