// The configuration search (planner/configure.hpp) against brute force: on small spaces the
// pruned ranking equals timing every configuration, every bound it orders by is at most the time
// it bounds, and every row's time is what `recycle simulate --job` gives its job (the whole
// layout generated and simulated, pipelines folded, as simulate_command.cpp runs it).
#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "planner/configure.hpp"
#include "planner/generators.hpp"
#include "planner/job_model.hpp"
#include "planner/timing/memory.hpp"
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
        x.distributed_optimizer != y.distributed_optimizer) {
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
                       doctest::Contains("unknown schedule \"zb-h3\""), recycle::InputError);
  space.schedules = {};
  space.gpus = 0;
  CHECK_THROWS_WITH_AS((void)recycle::planner::configure(space),
                       "--gpus: expected a positive "
                       "number of GPUs",
                       recycle::InputError);
}
