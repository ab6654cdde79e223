#include "profiles/job.hpp"

#include <nlohmann/json.hpp>

#include "core/json.hpp"
#include "core/schedule_names.hpp"
#include "profiles/shipped.hpp"

namespace recycle::profiles {

namespace {

/// Limits that keep every product of the configuration far from overflowing 64 bits.
constexpr std::int64_t kMaxDegree = 1 << 20;
constexpr std::int64_t kMaxBatch = std::int64_t{1} << 40;

ParallelConfig parallel_from_json(const JsonView& v) {
  v.only_keys({"tp", "pp", "dp", "interleave", "microbatch_size", "global_batch",
               "sequence_parallel", "recompute", "attention", "dtype"});
  ParallelConfig p;
  const auto degree = [&](std::string_view key, std::int32_t fallback) {
    const auto x = v.find(key);
    return x ? static_cast<std::int32_t>(x->as_int(1, kMaxDegree)) : fallback;
  };
  p.tp = degree("tp", 1);
  p.pp = degree("pp", 1);
  p.dp = degree("dp", 1);
  p.interleave = degree("interleave", 1);
  if (const auto x = v.find("microbatch_size")) p.microbatch_size = x->as_int(1, kMaxBatch);
  p.global_batch = v.at("global_batch").as_int(1, kMaxBatch);
  if (const auto x = v.find("sequence_parallel")) p.sequence_parallel = x->as_bool();
  if (const auto x = v.find("recompute")) {
    constexpr Recompute kModes[] = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
    p.recompute = kModes[x->as_choice({"none", "selective", "full"})];
  }
  if (const auto x = v.find("attention"))
    p.flash_attention = x->as_choice({"flash", "standard"}) == 0;
  if (const auto x = v.find("dtype")) {
    constexpr DType kTypes[] = {DType::kBf16, DType::kFp16, DType::kTf32, DType::kFp32};
    p.dtype = kTypes[x->as_choice({"bf16", "fp16", "tf32", "fp32"})];
  }
  return p;
}

/// The optimizer block: `{"distributed": bool, "lost_shard": "checkpoint" | "replica"}`.
void optimizer_from_json(const JsonView& v, ParallelConfig& p) {
  v.only_keys({"distributed", "lost_shard"});
  if (const auto x = v.find("distributed")) p.distributed_optimizer = x->as_bool();
  if (const auto x = v.find("lost_shard")) {
    p.shard_copies = x->as_choice({"checkpoint", "replica"}) == 0 ? 1 : 2;
    if (p.shard_copies == 2 && !p.distributed_optimizer)
      x->fail("\"replica\" keeps a copy of each optimizer shard: it needs \"distributed\": true");
  }
}

}  // namespace

Job job_from_json(const nlohmann::json& json, const std::string& source) {
  const JsonView root(json, source);
  root.only_keys({"format", "name", "model", "hardware", "parallel", "optimizer", "schedule",
                  "cluster", "detection", "checkpoint", "restart"});
  if (const auto format = root.find("format")) format->check_format("recycle.job/1");
  Job job;
  job.source = source;
  if (const auto name = root.find("name")) job.name = name->as_string();
  const JsonView model = root.at("model");
  job.model = model.raw().is_string() ? shipped_model(model.as_string(), model.where())
                                      : model_from_json(model.raw(), model.where());
  const JsonView hardware = root.at("hardware");
  job.gpu = hardware.raw().is_string() ? shipped_gpu(hardware.as_string(), hardware.where())
                                       : gpu_from_json(hardware.raw(), hardware.where());
  job.parallel = parallel_from_json(root.at("parallel"));
  if (const auto optimizer = root.find("optimizer")) optimizer_from_json(*optimizer, job.parallel);
  if (const auto schedule = root.find("schedule")) {
    job.schedule = schedule->as_string();
    if (job.schedule.empty()) schedule->fail("is empty: name a schedule, e.g. \"1f1b\"");
    if (!is_schedule_name(job.schedule, schedule_names()))
      schedule->fail(unknown_schedule_message(job.schedule, schedule_names()));
  }
  job.resilience = resilience_from_json(root, job.parallel, job.gpu.gpus_per_node);
  job.gpu.gpus_per_node = job.resilience.cluster.gpus_per_node;  // one value for costs and failures
  return job;
}

const char* to_string(Recompute recompute) noexcept {
  switch (recompute) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "none";
}

nlohmann::ordered_json parallel_to_json(const ParallelConfig& p) {
  return {{"tp", p.tp},
          {"pp", p.pp},
          {"dp", p.dp},
          {"interleave", p.interleave},
          {"microbatch_size", p.microbatch_size},
          {"global_batch", p.global_batch},
          {"sequence_parallel", p.sequence_parallel},
          {"recompute", to_string(p.recompute)},
          {"attention", p.flash_attention ? "flash" : "standard"},
          {"dtype", to_string(p.dtype)}};
}

nlohmann::ordered_json job_to_json(const nlohmann::json& model, const nlohmann::json& hardware,
                                   const ParallelConfig& parallel, const std::string& schedule) {
  return {{"format", "recycle.job/1"},
          {"model", model},
          {"hardware", hardware},
          {"parallel", parallel_to_json(parallel)},
          {"optimizer",
           {{"distributed", parallel.distributed_optimizer},
            {"lost_shard", parallel.shard_copies > 1 ? "replica" : "checkpoint"}}},
          {"schedule", schedule}};
}

Job load_job(const std::string& path) {
  return job_from_json(load_json(path), path);
}

}  // namespace recycle::profiles
