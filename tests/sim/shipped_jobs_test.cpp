// Every shipped model on every shipped GPU: a job that fits exists and `simulate --job`'s path
// (synthesize, plan, simulate) answers for it with a utilization a real GPU can have. The
// configuration is the first that fits, in the order a user would try: selective then full
// recomputation, the fewest pipeline stages, then the least tensor parallelism (sequence
// parallelism with it).
#include <doctest/doctest.h>

#include <cstdio>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "planner/generators.hpp"
#include "planner/job_model.hpp"
#include "planner/timing/memory.hpp"
#include "profiles/job.hpp"
#include "profiles/shipped.hpp"
#include "sim/metrics.hpp"
#include "sim/report.hpp"
#include "sim/simulator.hpp"

namespace {

struct Answer {
  recycle::profiles::Job job;
  double seconds = 0;
  double mfu = 0;
};

/// The job's iteration, or nullopt when it does not fit (the memory check's InputError).
std::optional<Answer> run(const nlohmann::json& spec) {
  const recycle::profiles::Job job = recycle::profiles::job_from_json(spec, "job");
  const recycle::planner::JobModel jm = recycle::planner::job_model(job);
  recycle::planner::GeneratorOptions gen;
  gen.layout = jm.layout;
  gen.model = jm.model;
  recycle::planner::Schedule schedule = recycle::planner::generate_fault_free(job.schedule, gen);
  try {
    recycle::planner::check_memory(schedule, jm.model, "job");
  } catch (const recycle::InputError&) {
    return std::nullopt;
  }
  recycle::sim::SimOptions options;
  options.iterations = 2;
  const auto metrics =
      recycle::sim::compute_metrics(recycle::sim::simulate(std::move(schedule), jm.model, options));
  const double seconds = recycle::to_seconds(metrics.iteration_time);
  return Answer{job, seconds, jm.synthesis.mfu(seconds)};
}

}  // namespace

TEST_CASE("simulate --job answers for every shipped model on every shipped GPU") {
  std::printf("%-12s %-9s %-26s %10s %6s\n", "model", "gpu", "tp/pp/dp, recompute", "iteration",
              "MFU");
  for (const auto& model : recycle::profiles::shipped_models()) {
    for (const auto& gpu : recycle::profiles::shipped_hardware()) {
      std::optional<Answer> answer;
      for (const char* recompute : {"selective", "full"}) {
        for (int pp = 1; pp <= 64 && !answer; pp *= 2) {
          for (int tp = 1; tp <= 8 && !answer; tp *= 2) {
            const int dp = 2;
            nlohmann::json spec = {{"model", std::string(model.name)},
                                   {"hardware", std::string(gpu.name)},
                                   {"parallel",
                                    {{"tp", tp},
                                     {"pp", pp},
                                     {"dp", dp},
                                     {"global_batch", dp * 4 * pp},
                                     {"sequence_parallel", tp > 1},
                                     {"recompute", recompute}}}};
            answer = run(spec);
          }
        }
        if (answer) break;
      }
      REQUIRE_MESSAGE(answer.has_value(), model.name, " on ", gpu.name, ": nothing fits");
      const auto& p = answer->job.parallel;
      const std::string config =
          std::to_string(p.tp) + "/" + std::to_string(p.pp) + "/" + std::to_string(p.dp) + ", " +
          (p.recompute == recycle::profiles::Recompute::kFull ? "full" : "selective");
      std::printf("%-12s %-9s %-26s %9.3fs %5.1f%%\n", std::string(model.name).c_str(),
                  std::string(gpu.name).c_str(), config.c_str(), answer->seconds,
                  100 * answer->mfu);
      CHECK(answer->seconds > 0);
      // No real job reaches its GPUs' peak, and none of these is so small that it idles.
      CHECK_MESSAGE(answer->mfu < 0.8, model.name, " on ", gpu.name);
      CHECK_MESSAGE(answer->mfu > 0.1, model.name, " on ", gpu.name);
    }
  }
}

TEST_CASE("MFU and TFLOP/s per GPU of the shipped GPT-3 175B job: Narayanan et al.'s formulas") {
  // profiles/jobs/gpt3-175b-a100-1024.json: GPT-3 175B (Brown et al.: l 96, h 12288, s 2048,
  // vocabulary 50257), global batch B 1024, 1024 A100s at 312 TFLOP/s (BF16 dense), selective
  // recomputation. Per iteration (Narayanan et al., SC '21, 5.1; Korthikanti et al. for the
  // selective part):
  //   model FLOPs     72 B s l h^2 + 12 B s^2 l h + 6 B s h V   (no recomputation)
  //   hardware FLOPs  the same + 4 B s^2 l h                    (the attention core again)
  // MFU = model FLOPs / (T x 1024 x 312e12); TFLOP/s per GPU = hardware FLOPs / (T x 1024) / 1e12,
  // with T the iteration time `simulate` reports.
  const auto job = recycle::profiles::load_job(std::string(RECYCLE_SOURCE_DIR) +
                                               "/profiles/jobs/gpt3-175b-a100-1024.json");
  const recycle::planner::JobModel jm = recycle::planner::job_model(job);
  recycle::planner::GeneratorOptions gen;
  gen.layout = jm.layout;
  gen.model = jm.model;
  const auto run = recycle::sim::simulate(recycle::planner::generate_fault_free(job.schedule, gen),
                                          jm.model, {});
  const auto metrics = recycle::sim::compute_metrics(run);
  const double t = recycle::to_seconds(metrics.iteration_time);
  const double b = 1024, s = 2048, l = 96, h = 12288, v = 50257, gpus = 1024, peak = 312e12;
  const double model = 72 * b * s * l * h * h + 12 * b * s * s * l * h + 6 * b * s * h * v;
  const double hardware = model + 4 * b * s * s * l * h;
  const double mfu = model / (t * gpus * peak);
  const double tflops = hardware / (t * gpus) / 1e12;
  CHECK(jm.synthesis.mfu(t) == doctest::Approx(mfu).epsilon(1e-12));
  CHECK(jm.synthesis.tflops_per_gpu(t) == doctest::Approx(tflops).epsilon(1e-12));
  // What the report prints is the same figure.
  const auto report = recycle::sim::report_json(run, metrics, &jm.synthesis);
  CHECK(report["mfu"].get<double>() == doctest::Approx(mfu).epsilon(1e-12));
  CHECK(report["tflops_per_gpu"].get<double>() == doctest::Approx(tflops).epsilon(1e-12));
}
