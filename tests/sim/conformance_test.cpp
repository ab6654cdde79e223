// One set of rules, many consumers: on a seeded corpus of random schedules (every generator,
// ReCycle and naive plans around random failures, random costs on a free network or a random
// profile's) and random perturbations of them
// (two neighbouring actions of one worker swapped, which may break an order rule or deadlock),
// every consumer must give the same answer:
//  - the validator finds an order or deadlock violation exactly when the execution graph has a
//    cycle, and exactly then the simulator refuses the schedule;
//  - a valid schedule's one-iteration timing (planner/language/timing.hpp), the planner's period
//  walk
//    (planner/timing/period.hpp) and the simulator's records agree;
//  - its lowering is valid and, on a free network, runs as the direct estimate the planners use;
//  - the order search reports the steady state the execution graph gives its result.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "planner/generators.hpp"
#include "planner/language/execution_graph.hpp"
#include "planner/language/failures.hpp"
#include "planner/language/lower.hpp"
#include "planner/language/timing.hpp"
#include "planner/language/validator.hpp"
#include "planner/order_search.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/cost_graph.hpp"
#include "planner/timing/period.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "tests/sim/random_profile.hpp"

namespace {

using namespace recycle;
using planner::Layout;
using planner::Schedule;

struct Case {
  std::string name;
  Schedule schedule;
  planner::CostModel model;
};

bool has(const std::vector<planner::Violation>& violations, planner::Rule rule) {
  return std::any_of(violations.begin(), violations.end(),
                     [rule](const planner::Violation& v) { return v.rule == rule; });
}

/// A random compute-only schedule from a random generator or planner.
Case random_case(Rng& rng) {
  const auto draw = [&](std::uint64_t n) { return static_cast<std::int32_t>(rng.below(n)); };
  const Layout layout{1 + draw(3), 2 + draw(3), 1 + draw(6), 1};
  // Half the cases on a free network with small whole costs, half on a profile's network.
  planner::CostModel model;
  if (draw(2) == 0) {
    planner::Costs costs = planner::Costs::uniform(layout.pp, {0, 0, 0});
    for (auto& c : costs.virtual_stages) c = {1 + draw(4), 1 + draw(5), draw(4)};
    model = planner::CostModel::compute_only(costs);
  } else {
    model = planner::CostModel::from_profile(sim_test::random_profile(rng, layout.pp), layout,
                                             "random");
  }
  std::vector<planner::WorkerId> failed;
  for (std::int32_t k = draw(3); k > 0; --k) {
    const planner::WorkerId w{draw(static_cast<std::uint64_t>(layout.dp)),
                              draw(static_cast<std::uint64_t>(layout.pp))};
    if (std::find(failed.begin(), failed.end(), w) == failed.end()) failed.push_back(w);
  }
  std::sort(failed.begin(), failed.end());
  if (planner::dead_stage(failed, layout) >= 0) failed.clear();
  const bool staggered = draw(2) == 1;
  const std::int32_t kind = draw(6);
  Case out{"", {}, model};
  if (kind < 4) {
    static const char* const kNames[] = {"gpipe", "1f1b", "zb-h1", "zb-h2"};
    planner::GeneratorOptions gen;
    gen.layout = layout;
    gen.model = model;
    gen.staggered_optimizer = staggered;
    out.name = kNames[kind];
    out.schedule = planner::generate_fault_free(kNames[kind], gen);
  } else if (kind == 4) {
    planner::RecycleOptions options;
    options.layout = layout;
    options.failed = failed;
    options.model = model;
    options.staggered_optimizer = staggered;
    options.search_work = 200'000;
    out.name = "recycle";
    out.schedule = planner::plan_recycle(options).schedule;
  } else {
    out.name = "naive";
    out.schedule = planner::plan_naive_reroute(layout, failed).schedule;
    out.schedule.staggered_optimizer = staggered;
  }
  out.name += " dp " + std::to_string(layout.dp) + " pp " + std::to_string(layout.pp) + " m " +
              std::to_string(layout.microbatches) + " failed " + std::to_string(failed.size());
  return out;
}

/// Swaps two neighbouring actions of a random worker.
Schedule perturbed(Schedule s, Rng& rng) {
  auto& w = s.workers[rng.below(s.workers.size())];
  if (w.actions.size() < 2) return s;
  const std::size_t at = rng.below(w.actions.size() - 1);
  std::swap(w.actions[at], w.actions[at + 1]);
  return s;
}

bool graph_has_cycle(const Schedule& s, const planner::CostModel& model) {
  planner::GraphOptions options;
  options.staggered_optimizer = s.staggered_optimizer;
  return !planner::timed_graph(s, model, options).ordered();
}

}  // namespace

TEST_CASE("every consumer of the schedule rules agrees, on random and perturbed schedules") {
  Rng rng(20261123);
  std::int32_t valid = 0, broken = 0, free = 0, networked = 0;
  for (std::int32_t n = 0; n < 150; ++n) {
    const Case c = random_case(rng);
    for (const bool perturb : {false, true}) {
      const Schedule s = perturb ? perturbed(c.schedule, rng) : c.schedule;
      CAPTURE(c.name);
      CAPTURE(perturb);
      const auto violations = planner::validate(s);
      const bool cycle = graph_has_cycle(s, c.model);
      // Validator and graph: on a compute-only schedule every order violation is a cycle.
      CHECK(cycle ==
            (has(violations, planner::Rule::kOrder) || has(violations, planner::Rule::kDeadlock)));
      CHECK(cycle == !planner::compute_timeline(s, c.model.compute).has_value());
      if (!violations.empty()) {
        ++broken;
        CHECK_THROWS_AS((void)sim::simulate(s, c.model, {}), InputError);
        continue;
      }
      ++valid;
      // Timing, the period walk and the simulator.
      const sim::SimRun run =
          sim::simulate(s, c.model, {.staggered_optimizer = s.staggered_optimizer});
      const sim::Metrics metrics = sim::compute_metrics(run);
      const auto steady = planner::steady_state(s, c.model);
      REQUIRE(steady.has_value());
      CHECK(steady->makespan == metrics.iteration_ends.front());
      CHECK(steady->period == metrics.iteration_time);
      // The lowering is valid on every network.
      const Schedule lowered = planner::lower(s, c.model);
      CHECK(planner::validate(lowered).empty());
      ++(c.model.cluster.free() ? free : networked);
      if (!c.model.cluster.free()) continue;
      // On a free network (no transfer time, no optimizer time): one iteration from time 0 ends
      // when compute_timeline's last action ends, and the lowered schedule runs as the
      // planners' direct estimate.
      CHECK(planner::compute_timeline(s, c.model.compute)->makespan == steady->makespan);
      const auto direct = planner::direct_steady_state(s, c.model);
      REQUIRE(direct.has_value());
      CHECK(direct->period == steady->period);
      CHECK(direct->makespan == steady->makespan);
    }
  }
  CHECK(valid > 100);
  CHECK(broken > 30);
  CHECK(free > 40);
  CHECK(networked > 40);
}

TEST_CASE("the order search reports the steady state the execution graph gives its result") {
  Rng rng(7);
  std::int32_t searched = 0;
  for (std::int32_t n = 0; n < 40; ++n) {
    const Case c = random_case(rng);
    if (c.schedule.layout.interleave != 1 || c.name.rfind("naive", 0) == 0 ||
        c.name.rfind("gpipe", 0) == 0 || c.name.rfind("1f1b", 0) == 0) {
      continue;  // the search orders split backwards
    }
    CAPTURE(c.name);
    Schedule skeleton = c.schedule;
    skeleton.workers.clear();
    const std::vector<std::int32_t> limits(static_cast<std::size_t>(skeleton.layout.pp),
                                           skeleton.layout.microbatches * skeleton.layout.dp);
    const planner::OrderSearchResult r =
        planner::search_orders({&skeleton, &c.model, limits, 500'000}, {c.schedule.workers});
    Schedule out = skeleton;
    out.workers = r.workers;
    const auto steady = planner::direct_steady_state(out, c.model);
    REQUIRE(steady.has_value());
    CHECK(steady->period == r.score.period);
    CHECK(steady->makespan == r.score.makespan);
    CHECK(planner::validate(out).empty());
    ++searched;
  }
  CHECK(searched >= 8);
}
