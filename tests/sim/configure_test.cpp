// The configuration search (planner/configure.hpp) against brute force: on small spaces the
// pruned ranking equals timing every configuration, every bound it orders by is at most the time
// it bounds, and every row's time is what `recycle simulate --job` gives its job (the whole
// layout generated and simulated, pipelines folded, as simulate_command.cpp runs it).
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json.hpp"
#include "planner/configure.hpp"
#include "planner/generators.hpp"
#include "planner/job_model.hpp"
#include "planner/pipeline_period.hpp"
#include "planner/timing/memory.hpp"
#include "profiles/job.hpp"
#include "profiles/shipped.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"

namespace {

using recycle::planner::Configuration;
using recycle::planner::ConfigureSpace;

ConfigureSpace small_space(const char* model, std::int64_t gpus, std::int64_t batch) {
  ConfigureSpace space;
  space.model = recycle::profiles::shipped_model(model, "model");
  space.gpu = recycle::profiles::shipped_gpu("a100-80g", "hardware");
  space.gpus = gpus;
  space.global_batch = batch;
  space.max_microbatch_size = 4;
  space.max_interleave = 3;
  return space;
}

/// What `recycle simulate --job` prints as the job's iteration time.
recycle::Nanos simulated(const ConfigureSpace& space, const Configuration& c) {
  recycle::profiles::Job job;
  job.source = "job.json";
  job.model = space.model;
  job.gpu = space.gpu;
  job.parallel = c.parallel;
  job.schedule = c.schedule;
  const recycle::planner::JobModel jm = recycle::planner::job_model(job);
  recycle::planner::GeneratorOptions gen;
  gen.layout = jm.layout;
  gen.model = jm.model;
  recycle::planner::Schedule schedule = recycle::planner::generate_fault_free(c.schedule, gen);
  recycle::planner::check_memory(schedule, jm.model, "job.json");
  const auto run = recycle::sim::simulate(std::move(schedule), jm.model, {});
  return recycle::sim::compute_metrics(run).iteration_time;
}

bool same_rows(const std::vector<Configuration>& a, const std::vector<Configuration>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto& x = a[i].parallel;
    const auto& y = b[i].parallel;
    if (a[i].schedule != b[i].schedule || a[i].iteration != b[i].iteration || x.tp != y.tp ||
        x.pp != y.pp || x.dp != y.dp || x.interleave != y.interleave ||
        x.microbatch_size != y.microbatch_size || x.recompute != y.recompute ||
        x.sequence_parallel != y.sequence_parallel ||
        x.distributed_optimizer != y.distributed_optimizer || x.shard_copies != y.shard_copies) {
      return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("configure: the pruned ranking is brute force's, and every bound is below its time") {
  for (const auto& [model, gpus, batch] :
       {std::tuple{"gpt3-350m", 8, 16}, std::tuple{"gpt3-1.3b", 16, 64},
        std::tuple{"llama2-7b", 16, 32}}) {
    CAPTURE(model);
    ConfigureSpace space = small_space(model, gpus, batch);
    space.top = 100'000;  // every configuration that runs
    space.prune = false;
    const auto all = recycle::planner::configure(space);
    REQUIRE(all.ranked.size() > 20);
    CHECK(all.pruned == 0);
    for (const Configuration& c : all.ranked) CHECK(c.lower_bound <= c.iteration);
    for (const std::int32_t top : {1, 5, 20}) {
      CAPTURE(top);
      space.top = top;
      space.prune = true;
      const auto pruned = recycle::planner::configure(space);
      const std::vector<Configuration> head(all.ranked.begin(), all.ranked.begin() + top);
      CHECK(same_rows(pruned.ranked, head));
      CHECK(pruned.timed < all.timed);
    }
  }
}

TEST_CASE("configure: every row times as `recycle simulate --job` times its job") {
  ConfigureSpace space = small_space("gpt3-1.3b", 16, 64);
  space.top = 40;
  const auto result = recycle::planner::configure(space);
  REQUIRE(result.ranked.size() == 40);
  for (const Configuration& c : result.ranked) {
    CAPTURE(c.schedule);
    CAPTURE(c.parallel.pp);
    CAPTURE(c.parallel.tp);
    CHECK(simulated(space, c) == c.iteration);
  }
}

TEST_CASE("configure: a space with no GPUs, batch or known schedule is an error naming the flag") {
  ConfigureSpace space = small_space("gpt3-350m", 8, 16);
  space.schedules = {"1f1b", "zb-h3"};
  CHECK_THROWS_WITH_AS((void)recycle::planner::configure(space),
                       doctest::Contains("unknown schedule 'zb-h3', expected one of gpipe, 1f1b"),
                       recycle::InputError);
  space.schedules = {};
  space.gpus = 0;
  CHECK_THROWS_WITH_AS((void)recycle::planner::configure(space),
                       "--gpus: expected a positive "
                       "number of GPUs",
                       recycle::InputError);
}

namespace {

/// Where the authors' configuration of a published run ranks in `space` (0: below the first
/// `most`), and how much slower it is than the best: {rank (1 = best), authors' time / best - 1}.
std::tuple<std::int64_t, double, Configuration> rank_of(ConfigureSpace space,
                                                        const recycle::profiles::Job& job,
                                                        std::int32_t most) {
  recycle::profiles::Job authors = job;
  authors.source = "authors";
  const recycle::planner::JobModel jm = recycle::planner::job_model(authors);
  const auto own =
      recycle::planner::pipeline_period(jm.model, jm.layout, job.schedule, "authors", jm.layout.pp,
                                        jm.layout.microbatches, jm.layout.dp);
  REQUIRE(own.has_value());
  space.top = most;
  const auto result = recycle::planner::configure(space);
  REQUIRE_FALSE(result.ranked.empty());
  std::int64_t faster = 0;
  for (const Configuration& c : result.ranked) faster += c.iteration < own->period ? 1 : 0;
  const double best = recycle::to_seconds(result.ranked.front().iteration);
  const bool below = faster == static_cast<std::int64_t>(result.ranked.size()) &&
                     result.ranked.size() == static_cast<std::size_t>(most);
  return {below ? 0 : faster + 1, recycle::to_seconds(own->period) / best - 1,
          result.ranked.front()};
}

}  // namespace

TEST_CASE(
    "configure: where Megatron-LM's published configurations rank (Narayanan et al. SC '21, "
    "Table 1)") {
  // Each published run (tests/sim/data/published_throughput.json: Table 1's layouts from the
  // authors' scripts, and Korthikanti et al.'s), searched over what Megatron-LM offered then
  // (1F1B and interleaved, full recomputation, and for Korthikanti et al.'s runs selective
  // recomputation and sequence parallelism; no distributed optimizer; fp16, standard attention)
  // and over the whole space. The authors' configuration is in both, timed independently here,
  // so the best each search returns is never slower than it; the table (docs/configure.md) says by
  // how much it is faster. (The target, the authors' configuration within a few percent
  // of the best, does not hold on every row: docs/configure.md gives the figures.)
  const std::string path =
      std::string(RECYCLE_SOURCE_DIR) + "/tests/sim/data/published_throughput.json";
  const nlohmann::json doc = recycle::load_json(path);
  std::printf("%-10s %6s %6s  %-22s %12s %7s\n", "model", "GPUs", "batch", "authors (tp/pp/v/mbs)",
              "2021 rank, gap", "whole gap");
  int rows = 0;
  for (const auto& row : doc.at("rows")) {
    // Korthikanti et al.'s runs add selective recomputation and sequence parallelism, which
    // their paper introduced; Narayanan et al.'s had neither.
    const bool korthikanti =
        row.at("source").get<std::string>().find("Korthikanti") != std::string::npos;
    const recycle::profiles::Job job = recycle::profiles::job_from_json(row.at("job"), path);
    CAPTURE(job.name);
    const auto& p = job.parallel;
    ConfigureSpace space;
    space.model = job.model;
    space.gpu = job.gpu;
    space.gpus = p.gpus();
    space.global_batch = p.global_batch;
    space.dtype = p.dtype;
    space.flash_attention = p.flash_attention;
    ConfigureSpace then = space;
    then.schedules = {"1f1b", "interleaved"};
    then.recompute = {recycle::profiles::Recompute::kFull};
    then.sequence_parallel = {false};
    if (korthikanti) {
      then.recompute.push_back(recycle::profiles::Recompute::kSelective);
      then.sequence_parallel.push_back(true);
    }
    then.optimizer = {ConfigureSpace::Optimizer::kReplicated};
    const auto [rank_then, gap_then, best] = rank_of(then, job, 32);
    const auto [rank_all, gap_all, best_all] = rank_of(space, job, 1);
    const std::string authors = std::to_string(p.tp) + "/" + std::to_string(p.pp) + "/" +
                                std::to_string(p.interleave) + "/" +
                                std::to_string(p.microbatch_size);
    const auto& b = best.parallel;
    std::printf("%-10s %6lld %6lld  %-22s %4lld %+6.1f%% %+6.1f%%  best then %d/%d/%d/%lld %s\n",
                job.name.c_str(), static_cast<long long>(space.gpus),
                static_cast<long long>(space.global_batch), authors.c_str(),
                static_cast<long long>(rank_then), 100 * gap_then, 100 * gap_all, b.tp, b.pp,
                b.interleave, static_cast<long long>(b.microbatch_size), best.schedule.c_str());
    std::fflush(stdout);
    CHECK(gap_then >= 0);
    CHECK(gap_all >= gap_then);
    ++rows;
  }
  CHECK(rows == 19);
}
