// Folding identical pipelines (sim/pipeline_fold.hpp) must give the run of the whole schedule,
// record for record: on a seeded corpus of schedules (every generator, ReCycle and naive plans
// around random failures, compute-only and lowered, some perturbed into deadlocks), cost models
// (a free network, profiles whose pipelines are and are not interchangeable) and run options, the
// simulator with folding and without gives the same lowered lists, the same records with the same
// causes and the same errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "planner/generators.hpp"
#include "planner/language/failures.hpp"
#include "planner/language/lower.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/cost_graph.hpp"
#include "sim/pipeline_fold.hpp"
#include "sim/simulator.hpp"

namespace {

using namespace recycle;
using planner::Layout;
using planner::Schedule;

/// Stage times and bytes drawn at random; pipelines interchangeable or not.
planner::CostModel random_profile_model(Rng& rng, const Layout& layout, bool interchangeable) {
  const auto draw = [&](std::uint64_t n) { return static_cast<std::int64_t>(rng.below(n)); };
  profiles::Profile p;
  p.name = "random";
  // 8 GPUs per node: TP 8 puts each worker on a node of its own; TP 1 with 3 stages puts
  // pipelines across node boundaries, so relabelling them changes which transfers stay inside.
  p.tensor_parallel = interchangeable ? 8 : 1;
  for (std::int32_t s = 0; s < layout.pp; ++s) {
    p.stages.push_back({1'000 + 1'000 * draw(20), 1'000 + 1'000 * draw(20), 1'000 * draw(20),
                        1'000 * draw(10), 1'000'000, 1'000 + 1'000 * draw(1'000),
                        1'000'000 + 1'000'000 * draw(100), 0});
  }
  p.hardware = {8,
                1e9 + 1e8 * static_cast<double>(draw(40)),
                1e8 + 1e7 * static_cast<double>(draw(40)),
                draw(3'000),
                1'000 + draw(10'000),
                80'000'000'000,
                draw(2) == 0 ? 0.0 : 2e8};
  return planner::CostModel::from_profile(p, layout, "random profile");
}

struct Case {
  std::string name;
  Schedule schedule;
  planner::CostModel model;
  sim::SimOptions options;
};

std::optional<Case> random_case(Rng& rng) {
  const auto draw = [&](std::uint64_t n) { return static_cast<std::int32_t>(rng.below(n)); };
  const std::vector<std::string>& names = planner::fault_free_generator_names();
  const std::int32_t kind = draw(names.size() + 2);
  Layout layout{2 + draw(5), 2 + draw(3), 1 + draw(8), 1};
  const std::string generator = kind < static_cast<std::int32_t>(names.size())
                                    ? names[static_cast<std::size_t>(kind)]
                                : kind == static_cast<std::int32_t>(names.size()) ? "recycle"
                                                                                  : "naive";
  if (generator == "interleaved") {
    layout.interleave = 2;
    layout.microbatches = layout.pp * (1 + draw(2));
  }
  layout = planner::layout_for(generator, layout);
  Case out;
  const std::int32_t network = draw(3);
  if (network == 0) {
    planner::Costs costs = planner::Costs::uniform(layout.virtual_stages(), {0, 0, 0});
    for (auto& c : costs.virtual_stages) c = {1 + draw(4), 1 + draw(5), draw(4)};
    if (draw(2) == 0) costs.optimizer.assign(static_cast<std::size_t>(layout.pp), 1 + draw(3));
    out.model = planner::CostModel::compute_only(costs);
  } else {
    if (network == 2) {
      // Across node boundaries with TP 1: pipeline d starts at GPU 3d, so d and d + 8 sit alike.
      layout.pp = 3;
      layout.dp = 8 + draw(9);
    }
    out.model = random_profile_model(rng, layout, network == 1);
  }
  out.options.iterations = 1 + draw(3);
  out.options.staggered_optimizer = draw(2) == 1;
  out.options.network = draw(4) == 0 ? planner::Network::kDirect : planner::Network::kRuntime;
  out.options.eager_sends = draw(3) == 0;
  std::vector<planner::WorkerId> failed;
  for (std::int32_t k = 1 + draw(2); k > 0; --k) {
    const planner::WorkerId w{draw(static_cast<std::uint64_t>(layout.dp)),
                              draw(static_cast<std::uint64_t>(layout.pp))};
    if (std::find(failed.begin(), failed.end(), w) == failed.end()) failed.push_back(w);
  }
  std::sort(failed.begin(), failed.end());
  if (planner::dead_stage(failed, layout) >= 0) failed.resize(1);
  try {
    if (generator == "recycle") {
      planner::RecycleOptions options;
      options.layout = layout;
      options.failed = failed;
      options.model = out.model;
      options.staggered_optimizer = out.options.staggered_optimizer;
      options.search_work = 100'000;
      out.schedule = planner::plan_recycle(options).schedule;
    } else if (generator == "naive") {
      out.schedule = planner::plan_naive_reroute(layout, failed).schedule;
    } else {
      planner::GeneratorOptions gen;
      gen.layout = layout;
      gen.model = out.model;
      gen.staggered_optimizer = out.options.staggered_optimizer;
      out.schedule = planner::generate_fault_free(generator, gen);
    }
  } catch (const InputError&) {
    return std::nullopt;  // a layout the generator does not take
  }
  if (draw(4) == 0) out.schedule = planner::lower(out.schedule, out.model);
  if (draw(5) == 0) {  // two neighbouring actions swapped: may break an order rule or deadlock
    auto& w = out.schedule.workers[rng.below(out.schedule.workers.size())];
    if (w.actions.size() >= 2) {
      const std::size_t at = rng.below(w.actions.size() - 1);
      std::swap(w.actions[at], w.actions[at + 1]);
    }
  }
  out.name = generator + " dp " + std::to_string(layout.dp) + " pp " + std::to_string(layout.pp) +
             " m " + std::to_string(layout.microbatches) + " network " + std::to_string(network) +
             " failed " + std::to_string(failed.size());
  return out;
}

/// The first record where two record vectors differ, or "".
template <class Record>
std::string first_difference(const std::vector<Record>& x, const std::vector<Record>& y,
                             const std::string& what) {
  if (x.size() != y.size()) return what + " count";
  const auto at = std::mismatch(x.begin(), x.end(), y.begin());
  return at.first == x.end() ? "" : what + " record " + std::to_string(at.first - x.begin());
}

/// The first difference between two runs, or "" when they are the same.
std::string difference(const sim::SimRun& a, const sim::SimRun& b) {
  if (!(a.schedule == b.schedule)) return "lowered schedules";
  const sim::Timeline& x = a.timeline;
  const sim::Timeline& y = b.timeline;
  if (x.iterations != y.iterations || x.first_record != y.first_record) return "record layout";
  if (x.iteration_ends != y.iteration_ends) return "iteration ends";
  if (x.events != y.events) return "events";
  for (const std::string& d : {first_difference(x.actions, y.actions, "action"),
                               first_difference(x.transfers, y.transfers, "transfer"),
                               first_difference(x.collectives, y.collectives, "collective")}) {
    if (!d.empty()) return d;
  }
  return "";
}

/// The run, or the error message.
struct Outcome {
  std::optional<sim::SimRun> run;
  std::string error;
};

Outcome simulate(const Case& c, bool fold) {
  sim::SimOptions options = c.options;
  options.fold_pipelines = fold;
  try {
    return {sim::simulate(c.schedule, c.model, options), ""};
  } catch (const InputError& e) {
    return {std::nullopt, e.what()};
  }
}

}  // namespace

TEST_CASE("folding identical pipelines gives the whole schedule's run, record for record") {
  Rng rng(20261125);
  std::int32_t cases = 0, folded = 0, refused = 0, kept_out = 0;
  while (cases < 300) {
    const std::optional<Case> c = random_case(rng);
    if (!c) continue;
    ++cases;
    CAPTURE(c->name);
    const std::optional<sim::PipelineFold> fold = sim::fold_pipelines(c->schedule, c->model);
    if (fold) {
      ++folded;
      kept_out += fold->folded_pipelines;
    }
    const Outcome whole = simulate(*c, false);
    const Outcome with_fold = simulate(*c, true);
    CHECK(whole.error == with_fold.error);
    if (whole.run && with_fold.run) CHECK(difference(*whole.run, *with_fold.run) == "");
    if (!whole.run) ++refused;
  }
  // The corpus exercises both paths: folds, and schedules refused as bad input.
  MESSAGE(folded << " of " << cases << " cases folded " << kept_out << " pipelines; " << refused
                 << " refused");
  CHECK(folded >= 60);
  CHECK(refused >= 5);
}

TEST_CASE("which pipelines fold") {
  const Layout layout{4, 4, 8, 1};
  planner::GeneratorOptions gen;
  gen.layout = layout;
  gen.model = planner::CostModel::compute_only(planner::Costs::uniform(4, {1, 1, 1}));
  const Schedule zb = planner::generate_fault_free("zb-h1", gen);
  SUBCASE("a fault-free schedule: every pipeline onto the first") {
    const auto fold = sim::fold_pipelines(zb, gen.model);
    REQUIRE(fold);
    CHECK(fold->folded_pipelines == 3);
    REQUIRE(fold->schedule.workers.size() == 4);
    for (std::int32_t s = 0; s < 4; ++s) {
      CHECK(fold->schedule.workers[static_cast<std::size_t>(s)].id == planner::WorkerId{0, s});
    }
    // Worker (d, s) is at index 4d + s and repeats (0, s).
    for (std::size_t i = 0; i < 16; ++i) CHECK(fold->source[i] == static_cast<std::int32_t>(i % 4));
  }
  SUBCASE("a pipeline whose list differs stays") {
    Schedule s = zb;
    std::swap(s.workers[9].actions[0], s.workers[9].actions[1]);  // worker (2, 1)
    const auto fold = sim::fold_pipelines(s, gen.model);
    REQUIRE(fold);
    CHECK(fold->folded_pipelines == 2);  // pipelines 1 and 3 onto 0; 2 on its own
    CHECK(fold->source[9] == 5);         // (2, 1) is the sixth worker simulated
    CHECK(fold->source[13] == 1);        // (3, 1) repeats (0, 1)
  }
  SUBCASE("pipelines named in a route, or missing a worker, stay") {
    Schedule s = zb;
    s.routes.push_back({1, 2, 0, 3});        // pipeline 1's micro-batch 0 at stage 2 on pipeline 3
    s.workers.erase(s.workers.begin() + 8);  // worker (2, 0)
    const auto fold = sim::fold_pipelines(s, gen.model);
    CHECK(!fold);  // only pipeline 0 is left to fold onto
  }
  SUBCASE("workers out of (dp, stage) order: nothing folds") {
    Schedule s = zb;
    std::swap(s.workers[0], s.workers[1]);
    CHECK(!sim::fold_pipelines(s, gen.model));
  }
  SUBCASE("pipelines that straddle nodes fold onto those that sit alike") {
    // TP 1, 3 stages, 8 GPUs per node: pipeline d starts at GPU 3d, at offset 3d mod 8 in its
    // node; 3 and 8 are coprime, so pipelines 0-7 sit at 8 different offsets and d + 8 sits as d.
    Rng rng(7);
    for (const std::int32_t pipelines : {8, 16}) {
      const Layout three{pipelines, 3, 6, 1};
      const planner::CostModel model = random_profile_model(rng, three, false);
      REQUIRE(!model.cluster.pipelines_interchangeable());
      planner::GeneratorOptions g;
      g.layout = three;
      g.model = model;
      const auto fold = sim::fold_pipelines(planner::generate_fault_free("1f1b", g), model);
      if (pipelines == 8) {
        CHECK(!fold);
      } else {
        REQUIRE(fold);
        CHECK(fold->folded_pipelines == 8);
        for (std::size_t i = 24; i < 48; ++i)  // worker (d, s) at 3d + s repeats (d - 8, s)
          CHECK(fold->source[i] == static_cast<std::int32_t>(i - 24));
      }
    }
  }
}
