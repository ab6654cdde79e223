// Job files: names of shipped specs or inline specs, the parallel block, and every typo an error.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json.hpp"
#include "profiles/job.hpp"
#include "profiles/shipped.hpp"

namespace {

recycle::profiles::Job job_of(const std::string& text) {
  return recycle::profiles::job_from_json(recycle::parse_json(text, "job.json"), "job.json");
}

std::string error_of(const std::string& text) {
  try {
    (void)job_of(text);
  } catch (const recycle::InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a job names shipped specs and gives the parallel configuration") {
  const auto job = job_of(R"({"model": "gpt3-175b", "hardware": "a100-80g",
    "parallel": {"tp": 8, "pp": 8, "dp": 16, "microbatch_size": 2, "global_batch": 1024,
                 "sequence_parallel": true, "recompute": "selective", "attention": "standard",
                 "dtype": "fp16"},
    "schedule": "zb-h1"})");
  CHECK(job.model.layers == 96);
  CHECK(job.gpu.memory_bytes == std::int64_t{80} << 30);
  CHECK(job.parallel.microbatches() == 1024 / (16 * 2));
  CHECK(job.parallel.gpus() == 1024);
  CHECK(job.parallel.recompute == recycle::profiles::Recompute::kSelective);
  CHECK_FALSE(job.parallel.flash_attention);
  CHECK(job.parallel.dtype == recycle::profiles::DType::kFp16);
  CHECK(job.schedule == "zb-h1");
}

TEST_CASE("defaults: tp, pp, dp, interleave, micro-batch 1, no recompute, flash, bf16, 1f1b") {
  const auto job = job_of(R"({"model": "llama3-8b", "hardware": "h100-80g",
    "parallel": {"global_batch": 4}})");
  CHECK(job.parallel.tp == 1);
  CHECK(job.parallel.pp == 1);
  CHECK(job.parallel.dp == 1);
  CHECK(job.parallel.microbatches() == 4);
  CHECK(job.parallel.recompute == recycle::profiles::Recompute::kNone);
  CHECK(job.parallel.flash_attention);
  CHECK(job.parallel.dtype == recycle::profiles::DType::kBf16);
  CHECK(job.schedule == "1f1b");
}

TEST_CASE("inline model and hardware specs") {
  const auto job = job_of(R"({"model": {"layers": 4, "hidden": 256, "heads": 4,
      "ffn_hidden": 1024, "sequence_length": 128, "vocab_size": 1000},
    "hardware": {"matmul_flops": {"bf16": 1e14}, "memory_bytes": 1000000000,
      "memory_bandwidth_Bps": 1e12, "gpus_per_node": 4, "intra_node_bandwidth_Bps": 1e11,
      "inter_node_bandwidth_Bps": 1e10, "intra_node_latency_s": 1e-6, "inter_node_latency_s": 1e-5,
      "efficiency": {"matmul": 0.5, "matmul_half_dim": 32, "memory": 0.8, "nvlink": 0.7,
                     "network": 0.8}},
    "parallel": {"pp": 2, "global_batch": 8}})");
  CHECK(job.model.hidden == 256);
  CHECK(job.gpu.gpus_per_node == 4);
  CHECK(job.gpu.peak_flops(recycle::profiles::DType::kBf16) == 1e14);
}

TEST_CASE("every mistake in a job is an error naming the field") {
  CHECK(error_of(R"({"model": "gpt3-175b", "hardware": "a100-80g", "parallel": {"global_batch": 8},
                     "shedule": "1f1b"})") ==
        "job.json: shedule: unknown key (known: format, name, model, hardware, parallel, "
        "optimizer, schedule, cluster, detection, checkpoint, restart)");
  CHECK(error_of(R"({"model": "gpt3-175b", "hardware": "a100-80g", "parallel": {"global_batch": 8},
                     "optimizer": {"sharded": true}})") ==
        "job.json: optimizer.sharded: unknown key (known: distributed, lost_shard)");
  CHECK(error_of(R"({"model": "gpt3-175b", "hardware": "a100-80g", "parallel": {"global_batch": 8},
                     "optimizer": {"lost_shard": "replica"}})")
            .starts_with("job.json: optimizer.lost_shard: \"replica\" keeps a copy of each "
                         "optimizer shard: it needs \"distributed\": true"));
  CHECK(error_of(R"({"model": "gpt3-175b", "hardware": "a100-80g", "parallel": {"global_batch": 8},
                     "optimizer": {"distributed": true, "lost_shard": "peer"}})") ==
        "job.json: optimizer.lost_shard: expected \"checkpoint\" or \"replica\", got \"peer\"");
  CHECK(error_of(R"({"model": "gpt3-175b", "hardware": "a100-80g",
                     "parallel": {"global_batch": 8, "tp_size": 8}})")
            .starts_with("job.json: parallel.tp_size: unknown key (known: tp, pp, dp,"));
  CHECK(error_of(R"({"model": "gpt-5", "hardware": "a100-80g", "parallel": {"global_batch": 8}})")
            .starts_with("job.json: model: unknown model \"gpt-5\" (known: gpt3-1.3b, gpt3-13b,"));
  CHECK(
      error_of(R"({"model": "gpt3-175b", "hardware": "v100", "parallel": {"global_batch": 8}})") ==
      "job.json: hardware: unknown hardware \"v100\" (known: a100-40g, a100-80g, h100-80g, "
      "h200; or give an inline spec)");
  CHECK(error_of(R"({"model": "gpt3-175b", "hardware": "a100-80g",
                     "parallel": {"global_batch": 8, "recompute": "some"}})") ==
        "job.json: parallel.recompute: expected \"none\", \"selective\" or \"full\", got \"some\"");
  CHECK(error_of(R"({"model": "gpt3-175b", "hardware": "a100-80g", "parallel": {"tp": 0,
                     "global_batch": 8}})")
            .starts_with("job.json: parallel.tp: "));
  CHECK(error_of(R"({"model": "gpt3-175b", "hardware": "a100-80g", "parallel": {}})") ==
        "job.json: parallel.global_batch: missing field");
  CHECK(error_of(R"({"model": {"layers": 2}, "hardware": "a100-80g",
                     "parallel": {"global_batch": 8}})")
            .starts_with("job.json: model: hidden: missing field"));
}

TEST_CASE("every shipped hardware spec reads, with its sources") {
  for (const auto& spec : recycle::profiles::shipped_hardware()) {
    const auto json = recycle::parse_json(std::string(spec.json), std::string(spec.name));
    const auto gpu = recycle::profiles::gpu_from_json(json, std::string(spec.name));
    CHECK(gpu.peak_flops(recycle::profiles::DType::kBf16) > 0);
    // Every number of the file is cited.
    for (const char* field :
         {"matmul_flops", "memory_bytes", "memory_bandwidth_Bps", "gpus_per_node",
          "intra_node_bandwidth_Bps", "inter_node_bandwidth_Bps", "intra_node_latency_s",
          "inter_node_latency_s", "efficiency"}) {
      CHECK_MESSAGE(json.at("sources").contains(field), spec.name, ": ", field);
    }
  }
  CHECK(recycle::profiles::shipped_hardware().size() == 4);
  CHECK(recycle::profiles::shipped_models().size() == 12);
}

TEST_CASE("a name holding control bytes is quoted on one line") {
  CHECK(error_of(R"({"model": "gpt\nx", "hardware": "a100-80g", "parallel": {"global_batch": 8}})")
            .starts_with("job.json: model: unknown model \"gpt\\x0Ax\" (known: "));
}

TEST_CASE("job_to_json reads back to the same configuration and schedule") {
  recycle::profiles::ParallelConfig p;
  p.tp = 4;
  p.pp = 8;
  p.dp = 16;
  p.interleave = 3;
  p.microbatch_size = 2;
  p.global_batch = 768;
  p.sequence_parallel = true;
  p.recompute = recycle::profiles::Recompute::kSelective;
  p.flash_attention = false;
  p.dtype = recycle::profiles::DType::kFp16;
  p.distributed_optimizer = true;
  p.shard_copies = 2;
  const auto json = recycle::profiles::job_to_json("gpt3-175b", "a100-80g", p, "interleaved");
  const auto job = recycle::profiles::job_from_json(nlohmann::json(json), "job.json");
  const auto& q = job.parallel;
  CHECK(job.schedule == "interleaved");
  CHECK(job.model.name == "GPT-3 175B");
  CHECK((q.tp == 4 && q.pp == 8 && q.dp == 16 && q.interleave == 3));
  CHECK((q.microbatch_size == 2 && q.global_batch == 768));
  CHECK(q.sequence_parallel);
  CHECK(q.recompute == recycle::profiles::Recompute::kSelective);
  CHECK_FALSE(q.flash_attention);
  CHECK(q.dtype == recycle::profiles::DType::kFp16);
  CHECK(q.distributed_optimizer);
  CHECK(q.shard_copies == 2);
}
