// Predictions against published measurements no one here produced: every row of
// tests/sim/data/published_throughput.json is a job that ran on DGX A100s and the number its
// paper reports. The synthesizer builds the profile, the job's schedule is generated and
// simulated, and the predicted TFLOP/s per GPU or iteration time is compared with the paper's.
// One hardware file for every row (profiles/hardware/a100-80g.json), no per-row constant.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "core/json.hpp"
#include "planner/generators.hpp"
#include "planner/job_model.hpp"
#include "planner/timing/memory.hpp"
#include "profiles/job.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"

namespace {

constexpr double kMeanBound = 0.05;  // the target: mean absolute error under 5 %
constexpr double kRowBound = 0.10;   // and no row over 10 %

}  // namespace

TEST_CASE("predicted throughput matches published measurements: mean error < 5 %, rows < 10 %") {
  const std::string path =
      std::string(RECYCLE_SOURCE_DIR) + "/tests/sim/data/published_throughput.json";
  const nlohmann::json doc = recycle::load_json(path);
  double sum = 0;
  double worst = 0;
  int rows = 0;
  std::printf("%-9s %-16s %-12s %9s %9s %7s\n", "model", "tp/pp/dp/v/mbs", "measure", "published",
              "predicted", "error");
  for (const auto& row : doc.at("rows")) {
    const std::string where = path + ": rows[" + std::to_string(rows) + "].job";
    const recycle::profiles::Job job = recycle::profiles::job_from_json(row.at("job"), where);
    const recycle::planner::JobModel jm = recycle::planner::job_model(job);
    recycle::planner::GeneratorOptions gen;
    gen.layout = jm.layout;
    gen.model = jm.model;
    recycle::planner::Schedule schedule = recycle::planner::generate_fault_free(job.schedule, gen);
    recycle::planner::check_memory(schedule, jm.model, where);
    recycle::sim::SimOptions options;
    options.iterations = 2;
    const auto run = recycle::sim::simulate(std::move(schedule), jm.model, options);
    const double seconds = recycle::to_seconds(recycle::sim::compute_metrics(run).iteration_time);
    const auto& published = row.at("published");
    double measured = 0, predicted = 0;
    std::string measure;
    if (published.contains("tflops_per_gpu")) {
      measure = "TFLOP/s/GPU";
      measured = published.at("tflops_per_gpu").get<double>();
      predicted = jm.synthesis.tflops_per_gpu(seconds);
    } else {
      measure = "iteration s";
      measured = published.at("iteration_time_s").get<double>();
      predicted = seconds;
    }
    const double error = (predicted - measured) / measured;
    const auto& p = job.parallel;
    const std::string config = std::to_string(p.tp) + "/" + std::to_string(p.pp) + "/" +
                               std::to_string(p.dp) + "/" + std::to_string(p.interleave) + "/" +
                               std::to_string(p.microbatch_size);
    std::printf("%-9s %-16s %-12s %9.2f %9.2f %+6.1f%%  %s\n", job.name.c_str(), config.c_str(),
                measure.c_str(), measured, predicted, 100 * error,
                row.at("source").get<std::string>().c_str());
    CHECK_MESSAGE(std::abs(error) < kRowBound, row.at("source").get<std::string>());
    sum += std::abs(error);
    worst = std::max(worst, std::abs(error));
    ++rows;
  }
  const double mean = sum / rows;
  std::printf("rows %d, mean absolute error %.1f %%, largest %.1f %%\n", rows, 100 * mean,
              100 * worst);
  CHECK(rows >= 19);
  CHECK(mean < kMeanBound);
}
