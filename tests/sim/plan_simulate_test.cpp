// `recycle plan` and `recycle simulate` print one steady-state iteration time: the period of the
// repeating cycle (planner::PeriodFinder), also when a plan's iterations alternate, on every
// network, with profiles whose stages differ and with failed workers. Each case is timed as
// `plan` times it (planner::steady_state of the lowered schedule) and as `simulate` reports it
// (sim::compute_metrics over a few recorded iterations), and the two must be equal to the
// nanosecond.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "planner/generators.hpp"
#include "planner/language/failures.hpp"
#include "planner/language/lower.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/cost_graph.hpp"
#include "planner/timing/period.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "tests/sim/random_profile.hpp"

namespace {

using namespace recycle;
using planner::Layout;

struct Drawn {
  std::string name;
  planner::Schedule schedule;
  planner::CostModel model;
  planner::RunOptions run;
};

Drawn draw_case(Rng& rng) {
  const auto draw = [&](std::uint64_t n) { return static_cast<std::int32_t>(rng.below(n)); };
  Layout layout{1 + draw(4), 2 + draw(3), 1 + draw(8), 1};
  static const char* const kNames[] = {"gpipe",   "1f1b",    "zb-h1",   "zb-h2", "interleaved",
                                       "recycle", "recycle", "recycle", "naive"};
  const std::string name = kNames[draw(9)];
  if (name == "interleaved") {
    layout.interleave = 2;
    layout.microbatches = layout.pp * (1 + draw(2));  // Megatron's: a multiple of the stages
  }
  Drawn out;
  out.model =
      planner::CostModel::from_profile(sim_test::random_profile(rng, layout.pp), layout, "random");
  out.run.network = draw(3) == 0 ? planner::Network::kDirect : planner::Network::kRuntime;
  out.run.eager_sends = out.run.network == planner::Network::kRuntime && draw(2) == 1;
  const bool staggered = draw(2) == 1;
  std::vector<planner::WorkerId> failed;
  for (std::int32_t k = name == "recycle" || name == "naive" ? 1 + draw(3) : 0; k > 0; --k) {
    const planner::WorkerId w{draw(static_cast<std::uint64_t>(layout.dp)),
                              draw(static_cast<std::uint64_t>(layout.pp))};
    if (std::find(failed.begin(), failed.end(), w) == failed.end()) failed.push_back(w);
  }
  std::sort(failed.begin(), failed.end());
  if (planner::dead_stage(failed, layout) >= 0) failed.clear();
  if (name == "recycle") {
    planner::RecycleOptions options;
    options.layout = layout;
    options.failed = failed;
    options.model = out.model;
    options.staggered_optimizer = staggered;
    options.run = out.run;
    options.search_work = 200'000;
    out.schedule = planner::plan_recycle(options).schedule;
  } else if (name == "naive") {
    out.schedule = planner::plan_naive_reroute(layout, failed).schedule;
    out.schedule.staggered_optimizer = staggered;
  } else {
    planner::GeneratorOptions gen;
    gen.layout = layout;
    gen.model = out.model;
    gen.staggered_optimizer = staggered;
    gen.run = out.run;
    out.schedule = planner::generate_fault_free(name, gen);
  }
  out.name = name + " dp " + std::to_string(layout.dp) + " pp " + std::to_string(layout.pp) +
             " m " + std::to_string(layout.microbatches) + " failed " +
             std::to_string(failed.size()) + (staggered ? " staggered" : " barrier") +
             (out.run.network == planner::Network::kDirect ? " direct"
              : out.run.eager_sends                        ? " eager"
                                                           : " runtime");
  return out;
}

}  // namespace

TEST_CASE("plan and simulate give one steady-state iteration time on 320 random cases") {
  Rng rng(20261127);
  std::int32_t cycles = 0, failures = 0, direct = 0;
  for (std::int32_t n = 0; n < 320; ++n) {
    const Drawn c = draw_case(rng);
    CAPTURE(c.name);
    // What `recycle plan` prints: the lowered schedule's period on the model's network.
    const planner::Schedule lowered = planner::lower(c.schedule, c.model);
    const auto planned = planner::steady_state(lowered, c.model, c.run);
    REQUIRE(planned.has_value());
    REQUIRE(planned->settled);
    // What `recycle simulate` prints, over its default four iterations and over one.
    for (const std::int32_t iterations : {4, 1}) {
      sim::SimOptions options;
      options.iterations = iterations;
      options.network = c.run.network;
      options.eager_sends = c.run.eager_sends;
      options.staggered_optimizer = c.schedule.staggered_optimizer;
      const sim::Metrics m = sim::compute_metrics(sim::simulate(c.schedule, c.model, options));
      CHECK(m.iteration_time == planned->period);
      CHECK(m.steady.cycle == planned->cycle);
    }
    cycles += planned->cycle > 1 ? 1 : 0;
    failures += c.schedule.failed.empty() ? 0 : 1;
    direct += c.run.network == planner::Network::kDirect ? 1 : 0;
  }
  // The draw reaches the cases this test is for.
  CHECK(cycles > 0);
  CHECK(failures > 60);
  CHECK(direct > 60);
}

TEST_CASE("a plan whose iterations alternate: simulate reports the mean over the cycle") {
  // Four uneven stages, 4 pipelines of 8 micro-batches, workers 0:1 and 2:2 failed, on the direct
  // network: the staggered ReCycle plan settles into a cycle of two iterations of different
  // lengths. Each iteration's length differs from the period, and the period is their mean.
  const Layout layout{4, 4, 8, 1};
  const auto profile =
      profiles::load_profile(std::string(RECYCLE_SOURCE_DIR) + "/tests/sim/data/four_stages.json");
  const planner::CostModel model = planner::CostModel::from_profile(profile, layout, "four");
  planner::RecycleOptions options;
  options.layout = layout;
  options.failed = {{0, 1}, {2, 2}};
  options.model = model;
  options.run.network = planner::Network::kDirect;
  const planner::Schedule plan = planner::plan_recycle(options).schedule;
  sim::SimOptions sim_options;
  sim_options.iterations = 6;
  sim_options.network = planner::Network::kDirect;
  sim_options.staggered_optimizer = plan.staggered_optimizer;
  const sim::Metrics m = sim::compute_metrics(sim::simulate(plan, model, sim_options));
  REQUIRE(m.steady.cycle == 2);
  const std::vector<Nanos>& e = m.iteration_ends;
  const Nanos fifth = e[4] - e[3], sixth = e[5] - e[4];
  CHECK(fifth != sixth);
  CHECK(fifth == e[2] - e[1]);  // the cycle repeats
  CHECK(m.iteration_time * 2 == fifth + sixth);
}
