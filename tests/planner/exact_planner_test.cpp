// The exact planner: optima worked out by hand, the two formulations agreeing, the fallbacks
// (other costs, time limit, dead stage), and the ReCycle heuristic's optimality gap over a set
// of small instances.
#include "planner/exact_planner.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "planner/language/failures.hpp"
#include "planner/language/timing.hpp"
#include "planner/language/validator.hpp"
#include "planner/order_search.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/cost_model.hpp"

namespace {

using recycle::Nanos;
using namespace recycle::planner;

/// One stage's costs for every stage, or one entry per stage.
Costs costs_for(const Layout& layout, const std::vector<StageCost>& stages) {
  if (stages.size() == 1) return Costs::uniform(layout.virtual_stages(), stages[0]);
  return Costs{stages, {}};
}

/// The heuristic's plan for the same problem: what the exact planner starts from.
Nanos heuristic_makespan(const ExactOptions& options) {
  RecycleOptions heuristic;
  heuristic.layout = options.layout;
  heuristic.base = options.base;
  heuristic.failed = options.failed;
  heuristic.model = CostModel::compute_only(options.costs);
  // ExactOptions' default limit (pp micro-batches), which may be below a base's share.
  heuristic.memory_limit = options.memory_limit.value_or(options.layout.pp);
  heuristic.staggered_optimizer = options.staggered_optimizer;
  heuristic.search_work = options.search_work;
  const RecyclePlan plan = plan_recycle(heuristic);
  REQUIRE(plan.feasible);
  const auto timeline = compute_timeline(plan.schedule, options.costs);
  REQUIRE(timeline.has_value());
  return timeline->makespan;
}

/// What every exact result must satisfy (with the optimizer barrier, where the MILP's makespan is
/// the period's objective): a valid schedule within the memory limit, timed by compute_timeline
/// to exactly the MILP's objective when optimal, never worse than the heuristic (recomputed here
/// from plan_recycle), and a lower bound below it.
void check_exact(const ExactOptions& options, const ExactResult& r) {
  REQUIRE(r.feasible);
  const std::int32_t limit = options.memory_limit.value_or(options.layout.pp);
  for (const Violation& v : validate(r.schedule, {limit})) FAIL_CHECK(v.message);
  CHECK(r.schedule.generator == "exact");
  const auto timeline = compute_timeline(r.schedule, options.costs);
  REQUIRE(timeline.has_value());
  CHECK(timeline->makespan == r.makespan);
  CHECK(r.heuristic_makespan == heuristic_makespan(options));
  CHECK(r.makespan <= r.heuristic_makespan);
  CHECK(r.lower_bound <= r.makespan);
  if (!r.optimal) return;
  CHECK(r.objective == r.makespan);
  CHECK(r.lower_bound == r.makespan);
}

ExactOptions options_for(Layout layout, const char* failed, const std::vector<StageCost>& costs) {
  ExactOptions options;
  options.layout = layout;
  options.failed = parse_failures(failed, layout);
  options.costs = costs_for(layout, costs);
  return options;
}

constexpr StageCost kUnit{1, 1, 1};
constexpr StageCost kSlowInput{1, 2, 1};  // I twice F and W, as in a transformer

}  // namespace

TEST_CASE("plan_exact: two stages, two micro-batches, F = I = W = 1") {
  // Stage 0 has 6 units of work. Its first I needs F0 on stage 0 (0-1), F0 and I0 on stage 1
  // (1-2, 2-3), so before 3 it can run only F0 and F1: idle for at least one unit, makespan at
  // least 7. Stage 1 gets its first input at 1 and has 6 units: at least 7 as well. 7 is
  // reached: stage 1 F0 1-2, I0 2-3, F1 3-4, I1 4-5, W0 5-6, W1 6-7; stage 0 F0 0-1, F1 1-2,
  // I0 3-4, W0 4-5, I1 5-6, W1 6-7.
  const ExactOptions options = options_for({1, 2, 2, 1}, "", {kUnit});
  const ExactResult r = plan_exact(options);
  check_exact(options, r);
  CHECK(r.optimal);
  CHECK(r.makespan == 7);
}

TEST_CASE("plan_exact: a memory limit of one micro-batch serializes the micro-batches") {
  // Holding one micro-batch, stage 0 must run W0 before F1. W0 ends at 5 at the earliest
  // (stage 0 F0 0-1; stage 1 F0 1-2, I0 2-3; stage 0 I0 3-4, W0 4-5), and then micro-batch 1
  // needs its whole chain F, F, I, I, W of 5 units: the optimum is 10, for both formulations.
  for (const Formulation formulation : {Formulation::kTimeIndexed, Formulation::kDisjunctive}) {
    CAPTURE(formulation_name(formulation));
    ExactOptions options = options_for({1, 2, 2, 1}, "", {kUnit});
    options.memory_limit = 1;
    options.formulation = formulation;
    const ExactResult r = plan_exact(options);
    check_exact(options, r);
    CHECK(r.optimal);
    CHECK(r.makespan == 10);
  }
}

TEST_CASE("plan_exact: the MILP's own schedule reaches a hand optimum the heuristic misses") {
  // dp 2 x pp 2, 2 micro-batches, worker 0:0 failed, memory 2, F = 1, I = 2, W = 1. Worker
  // (1,0) runs stage 0 for both pipelines: 4 micro-batches of 4 units, 16 units. Its first I can
  // start at 4 at the earliest (F 0-1 here, F 1-2 and I 2-4 on stage 1), and before then it can
  // run two Fs only (a third would hold 3 micro-batches): 2 units idle, so no schedule ends
  // before 18. 18 is reached (a, b, c, d: the micro-batches in the order of their F; a and c on
  // one stage-1 worker, b and d on the other): F(a) 0-1, F(b) 1-2, I(a) 4-6, W(a) 6-7,
  // F(c) 7-8, I(b) 8-10, W(b) 10-11, F(d) 11-12, I(c) 12-14, W(c) 14-15, I(d) 15-17,
  // W(d) 17-18, each stage-1 I done in time (b's at 3-5, c's at 9-11, d's at 13-15). The list
  // schedule (no order search) ends at 19, so the 18 below is the MILP's own, checked here
  // before the planner compares it with the heuristic's.
  for (const Formulation formulation : {Formulation::kTimeIndexed, Formulation::kDisjunctive}) {
    CAPTURE(formulation_name(formulation));
    ExactOptions options = options_for({2, 2, 2, 1}, "0:0", {kSlowInput});
    options.memory_limit = 2;
    options.search_work = 0;
    options.formulation = formulation;
    const ExactResult r = plan_exact(options);
    check_exact(options, r);
    CHECK(r.heuristic_makespan == 19);
    CHECK(r.milp_makespan == 18);
    CHECK(r.optimal);
    CHECK(r.lower_bound == 18);
    CHECK(r.makespan == 18);
  }
}

TEST_CASE("plan_exact: the time-indexed and the disjunctive formulation find the same optimum") {
  struct Case {
    Layout layout;
    const char* failed;
  };
  for (const Case& c : {Case{{3, 3, 2, 1}, "0:1,1:2"}, Case{{3, 4, 2, 1}, "0:1,1:2,2:3"},
                        Case{{4, 4, 2, 1}, "0:1,1:2,2:3"}}) {
    CAPTURE(c.failed);
    ExactOptions options = options_for(c.layout, c.failed, {kSlowInput});
    options.search_work = 0;  // the list schedule alone: CBC has a gap to close
    options.formulation = Formulation::kTimeIndexed;
    const ExactResult time_indexed = plan_exact(options);
    check_exact(options, time_indexed);
    options.formulation = Formulation::kDisjunctive;
    const ExactResult disjunctive = plan_exact(options);
    check_exact(options, disjunctive);
    CHECK(time_indexed.formulation == Formulation::kTimeIndexed);
    CHECK(disjunctive.formulation == Formulation::kDisjunctive);
    REQUIRE(time_indexed.optimal);
    REQUIRE(disjunctive.optimal);
    CHECK(time_indexed.makespan == disjunctive.makespan);
    CHECK(time_indexed.makespan < time_indexed.heuristic_makespan);  // a case with a gap
  }
}

TEST_CASE("plan_exact: costs off any small grain go to the disjunctive formulation") {
  // The costs' gcd is 1 ns, so a time grid would need millions of steps.
  const ExactOptions options = options_for({2, 2, 2, 1}, "0:1", {{1'000'003, 2'000'017, 999'983}});
  const ExactResult r = plan_exact(options);
  check_exact(options, r);
  CHECK(r.formulation == Formulation::kDisjunctive);
  CHECK(r.optimal);

  ExactOptions forced = options;
  forced.formulation = Formulation::kTimeIndexed;
  CHECK_THROWS_AS((void)plan_exact(forced), recycle::InputError);
}

TEST_CASE("plan_exact: out of time, the heuristic's schedule and the bound proven so far") {
  ExactOptions options = options_for({3, 3, 2, 1}, "0:1,1:2", {kSlowInput});
  options.search_work = 0;  // the list schedule alone, 2 above the optimum
  options.time_limit = 0;
  const ExactResult r = plan_exact(options);
  check_exact(options, r);
  CHECK_FALSE(r.optimal);
  CHECK(r.makespan == r.heuristic_makespan);
  CHECK(r.lower_bound < r.makespan);
}

TEST_CASE("plan_exact: no schedule when a whole stage is down") {
  const ExactOptions options = options_for({2, 2, 2, 1}, "0:1,1:1", {kUnit});
  const ExactResult r = plan_exact(options);
  CHECK_FALSE(r.feasible);
  CHECK(r.reason.find("stage 1") != std::string::npos);
}

namespace {

struct Instance {
  Layout layout;
  const char* failed;            ///< --fail syntax
  std::vector<StageCost> costs;  ///< one for every stage, or one per stage
  const char* base = "1f1b";     ///< the schedule ReCycle plans on
};

std::string describe(const Instance& inst) {
  std::string costs;
  for (const StageCost& c : inst.costs) {
    costs += (costs.empty() ? "" : "/") + std::to_string(c.forward) + "," +
             std::to_string(c.backward_input) + "," + std::to_string(c.backward_weight);
  }
  return (std::string(inst.base) == "1f1b" ? "" : std::string(inst.base) + " ") + "dp " +
         std::to_string(inst.layout.dp) + " pp " + std::to_string(inst.layout.pp) + " m " +
         std::to_string(inst.layout.microbatches) + " fail " + inst.failed + " F,I,W " + costs;
}

/// Solves `inst` exactly and requires CBC to prove the optimum; checks what every exact result
/// satisfies, that the heuristic is within 3 % of the optimum and that the makespan bound is below
/// it; appends a line to `table` (formulation "auto": the heuristic met the lower bound, nothing
/// was solved). Returns the heuristic's gap.
double proven_gap(const Instance& inst, std::string& table) {
  const std::string name = describe(inst);
  CAPTURE(name);
  ExactOptions options = options_for(inst.layout, inst.failed, inst.costs);
  options.base = inst.base;
  options.time_limit = 60;
  const ExactResult r = plan_exact(options);
  check_exact(options, r);
  REQUIRE(r.optimal);
  const double gap =
      static_cast<double>(r.heuristic_makespan) / static_cast<double>(r.makespan) - 1;
  char line[200];
  std::snprintf(line, sizeof line,
                "  %-56s heuristic %3lld  optimum %3lld  gap %5.2f %%  %-12s %5.2f s\n",
                name.c_str(), static_cast<long long>(r.heuristic_makespan),
                static_cast<long long>(r.makespan), 100 * gap,
                std::string(formulation_name(r.formulation)).c_str(), r.solve_seconds);
  table += line;
  CHECK(static_cast<double>(r.heuristic_makespan) <= 1.03 * static_cast<double>(r.makespan));
  Schedule routes;
  routes.layout = options.layout;
  routes.failed = options.failed;
  routes.routes = balanced_routes(options.layout, options.failed);
  CHECK(makespan_lower_bound(routes, options.costs) <= r.makespan);
  return gap;
}

}  // namespace

TEST_CASE("plan_exact: several chunks a worker, interleaved and V bases: hand optimum and gap") {
  // The hand case of tests/planner/recycle_bases_test.cpp: a V, DP 2, PP 2, one micro-batch a
  // pipeline, worker (1,0) failed: (0,0) has 12 s of work and must idle from 2 to 3 s: 13 s.
  {
    ExactOptions options = options_for({2, 2, 1, 2, Placement::kV}, "1:0", {kUnit});
    options.base = "zb-v";
    const ExactResult r = plan_exact(options);
    check_exact(options, r);
    CHECK(r.optimal);
    CHECK(r.makespan == 13);
  }
  const std::vector<Instance> instances = {
      {{2, 2, 2, 2}, "0:1", {kUnit}, "interleaved"},
      {{2, 2, 2, 2}, "0:0", {kSlowInput}, "interleaved"},
      {{3, 2, 2, 2}, "0:1", {kUnit}, "interleaved"},
      {{3, 2, 2, 2}, "0:0,1:1", {kSlowInput}, "interleaved"},
      {{2, 2, 2, 2, Placement::kV}, "0:0", {kUnit}, "zb-v"},
      {{2, 2, 2, 2, Placement::kV}, "0:1", {kSlowInput}, "zb-v"},
      {{3, 2, 2, 2, Placement::kV}, "0:1,1:0", {kUnit}, "zb-v"},
      {{2, 2, 4, 2, Placement::kV}, "1:1", {kUnit}, "dualpipe-v"},
      {{2, 3, 3, 2}, "0:1", {kSlowInput}, "interleaved"},
      {{3, 3, 3, 2}, "0:1,1:2", {kUnit}, "interleaved"},
      {{2, 2, 2, 3}, "1:0", {kSlowInput}, "interleaved"},
      {{2, 3, 3, 2, Placement::kV}, "0:2", {kSlowInput}, "zb-v"},
      {{3, 3, 2, 2, Placement::kV}, "0:0,1:1,2:2", {kUnit}, "zb-v"},
  };
  std::string table;
  double worst = 0;
  for (const Instance& inst : instances) worst = std::max(worst, proven_gap(inst, table));
  const std::string report =
      "several chunks a worker: largest gap " + std::to_string(100 * worst) + " %\n" + table;
  MESSAGE(report);
}

// The heuristic against the optimum on the same routes and memory limit (pp micro-batches),
// over small instances CBC proves optimal within its time limit: failures in one stage, in
// several stages of several pipelines, in one pipeline; uniform, slow-I and per-stage costs.
// The set was fixed before the order search (planner/order_search.hpp) was written; the search's
// constants were then tuned on it, so docs/recycle.md also reports a held-out set.
TEST_CASE("plan_exact: the ReCycle heuristic is within 3 % of the optimum on small instances") {
  const StageCost u = kUnit;
  const StageCost b = kSlowInput;
  const StageCost heavy{2, 3, 2};
  const StageCost heavier{2, 4, 2};
  const std::vector<Instance> instances = {
      // One failure.
      {{2, 2, 4, 1}, "0:1", {u}},
      {{2, 2, 8, 1}, "0:1", {b}},
      {{2, 3, 4, 1}, "0:1", {u}},
      {{2, 3, 4, 1}, "0:1", {b}},
      {{2, 3, 4, 1}, "0:0", {b}},
      {{2, 3, 4, 1}, "0:2", {b}},
      {{2, 3, 6, 1}, "0:1", {u}},
      {{2, 3, 8, 1}, "0:1", {u}},
      {{2, 4, 4, 1}, "0:2", {u}},
      {{2, 4, 4, 1}, "0:1", {b}},
      {{2, 4, 4, 1}, "0:3", {b}},
      {{2, 4, 6, 1}, "0:2", {u}},
      {{3, 2, 6, 1}, "0:1", {b}},
      {{3, 4, 4, 1}, "0:1", {u}},
      {{4, 2, 4, 1}, "0:1", {b}},
      {{4, 3, 4, 1}, "0:1", {u}},
      {{4, 4, 4, 1}, "0:1", {b}},
      // Several failures in one stage.
      {{3, 2, 4, 1}, "0:1,1:1", {b}},
      {{3, 3, 4, 1}, "0:1,1:1", {u}},
      {{3, 4, 4, 1}, "0:1,1:1", {u}},
      {{4, 3, 2, 1}, "0:1,1:1,2:1", {b}},
      // Failures in several stages of several pipelines.
      {{2, 4, 4, 1}, "0:1,1:3", {b}},
      {{3, 3, 2, 1}, "0:1,1:2", {b}},
      {{3, 3, 4, 1}, "0:1,1:2", {b}},
      {{3, 3, 4, 1}, "0:0,1:1,2:2", {u}},
      {{3, 4, 2, 1}, "0:1,1:2,2:3", {b}},
      {{4, 2, 4, 1}, "0:0,1:1,2:1", {u}},
      {{4, 3, 4, 1}, "0:1,1:2", {b}},
      {{4, 4, 2, 1}, "0:1,1:2,2:3", {b}},
      {{4, 4, 4, 1}, "0:0,1:1,2:2", {u}},
      // Failures in one pipeline.
      {{2, 3, 4, 1}, "0:1,0:2", {b}},
      {{2, 4, 4, 1}, "0:1,0:2", {b}},
      {{3, 3, 4, 1}, "0:1,0:2", {u}},
      {{3, 4, 4, 1}, "0:1,0:2,0:3", {b}},
      // Per-stage costs: a heavy first, middle or last stage.
      {{2, 3, 4, 1}, "0:1", {heavy, b, b}},
      {{2, 3, 4, 1}, "0:1", {b, heavier, b}},
      {{2, 4, 4, 1}, "0:1", {b, b, b, heavy}},
      {{3, 3, 4, 1}, "0:1", {b, heavy, b}},
      {{4, 4, 2, 1}, "0:1,0:2,0:3", {heavy, b, b, b}},
  };
  std::vector<double> gaps;
  std::string table;
  for (const Instance& inst : instances) gaps.push_back(proven_gap(inst, table));
  std::sort(gaps.begin(), gaps.end());
  char summary[160];
  std::snprintf(
      summary, sizeof summary,
      "heuristic vs optimum over %zu instances: gap min %.2f %%, median %.2f %%, max %.2f %%\n",
      gaps.size(), 100 * gaps.front(), 100 * gaps[gaps.size() / 2], 100 * gaps.back());
  const std::string report = summary + table;
  MESSAGE(report);
}

// The held-out check of the search's tuning (docs/recycle.md reports it): random small instances,
// drawn with a fixed seed, that the tuning never saw. About four minutes of CBC, so it is skipped
// unless asked for: recycle_planner_tests -tc="*held-out*" --no-skip. It checks what holds for
// every exact result and prints the gaps; it does not assert the 3 %, which one instance misses.
// An instance CBC does not prove optimal within its time limit stays in the study with its bound
// gap (heuristic over the proven lower bound), an upper bound on its true gap.
namespace {

/// A held-out study: `count` instances drawn by `draw` (nullopt: drawn again) from `seed`, each
/// solved with CBC (60 s); prints every gap, the median and the largest. An instance CBC does not
/// prove optimal stays in with its gap to the proven lower bound, an upper bound on its true gap.
template <class Draw>
void held_out_study(const char* title, std::uint64_t seed, std::size_t count, Draw draw) {
  recycle::Rng rng(seed);
  std::vector<double> gaps;
  std::string table;
  std::int64_t unproven = 0;
  while (gaps.size() < count) {
    const std::optional<ExactOptions> drawn = draw(rng);
    if (!drawn) continue;
    ExactOptions options = *drawn;
    options.time_limit = 60;
    const ExactResult r = plan_exact(options);
    check_exact(options, r);
    const Nanos reference = r.optimal ? r.makespan : r.lower_bound;
    const double gap =
        static_cast<double>(r.heuristic_makespan) / static_cast<double>(reference) - 1;
    gaps.push_back(gap);
    unproven += r.optimal ? 0 : 1;
    const Layout& layout = options.layout;
    std::string name = "dp " + std::to_string(layout.dp) + " pp " + std::to_string(layout.pp) +
                       " m " + std::to_string(layout.microbatches) + " F,I,W";
    for (std::int32_t s = 0; s < layout.pp; ++s) {
      const StageCost& c = options.costs.virtual_stages[static_cast<std::size_t>(s)];
      name += (s == 0 ? " " : "/") + std::to_string(c.forward) + "," +
              std::to_string(c.backward_input) + "," + std::to_string(c.backward_weight);
    }
    name += " fail";
    for (const WorkerId& w : options.failed)
      name += " " + std::to_string(w.dp) + ":" + std::to_string(w.stage);
    char line[240];
    std::snprintf(line, sizeof line, "  %-64s heuristic %3lld  %s %3lld  gap %5.2f %%\n",
                  name.c_str(), static_cast<long long>(r.heuristic_makespan),
                  r.optimal ? "optimum" : "bound  ", static_cast<long long>(reference), 100 * gap);
    table += line;
  }
  std::sort(gaps.begin(), gaps.end());
  const auto misses = std::count_if(gaps.begin(), gaps.end(), [](double g) { return g > 0.03; });
  char summary[240];
  std::snprintf(summary, sizeof summary,
                "%s: %zu instances (%lld not proven optimal: gap to the bound), %lld over 3 %%, "
                "median %.2f %%, max %.2f %%\n",
                title, gaps.size(), static_cast<long long>(unproven),
                static_cast<long long>(misses), 100 * gaps[gaps.size() / 2], 100 * gaps.back());
  const std::string report = summary + table;
  MESSAGE(report);
}

}  // namespace

TEST_CASE("plan_exact: held-out gap study (run with --no-skip)" * doctest::skip()) {
  held_out_study("held-out", 2026, 25, [](recycle::Rng& rng) -> std::optional<ExactOptions> {
    const auto draw = [&](std::uint64_t n) { return static_cast<std::int32_t>(rng.below(n)); };
    ExactOptions options;
    options.layout = {2 + draw(3), 2 + draw(3), 2 + 2 * draw(3), 1};
    const std::int32_t count = 1 + draw(3);
    while (static_cast<std::int32_t>(options.failed.size()) < count) {
      const WorkerId w{draw(static_cast<std::uint64_t>(options.layout.dp)),
                       draw(static_cast<std::uint64_t>(options.layout.pp))};
      if (std::find(options.failed.begin(), options.failed.end(), w) == options.failed.end())
        options.failed.push_back(w);
    }
    std::sort(options.failed.begin(), options.failed.end());
    if (dead_stage(options.failed, options.layout) >= 0) return std::nullopt;
    options.costs = Costs::uniform(options.layout.pp, {1, 1 + draw(2), 1});
    return options;
  });
}

// Widened: two or three failures always in different pipelines and different stages, and F, I
// and W drawn per stage (F and W 1-2, I 1-3), on DP and PP 3-4 with 4 or 6 micro-batches.
TEST_CASE("plan_exact: held-out study, spread failures, unequal costs (run with --no-skip)" *
          doctest::skip()) {
  held_out_study("spread, unequal", 2027, 20, [](recycle::Rng& rng) -> std::optional<ExactOptions> {
    const auto draw = [&](std::uint64_t n) { return static_cast<std::int32_t>(rng.below(n)); };
    ExactOptions options;
    options.layout = {3 + draw(2), 3 + draw(2), 4 + 2 * draw(2), 1};
    const std::int32_t count = 2 + draw(2);
    std::vector<std::int32_t> pipelines, stages;
    for (std::int32_t d = 0; d < options.layout.dp; ++d) pipelines.push_back(d);
    for (std::int32_t s = 0; s < options.layout.pp; ++s) stages.push_back(s);
    for (std::size_t i = pipelines.size(); i > 1; --i)
      std::swap(pipelines[i - 1], pipelines[rng.below(i)]);
    for (std::size_t i = stages.size(); i > 1; --i) std::swap(stages[i - 1], stages[rng.below(i)]);
    for (std::int32_t k = 0; k < count; ++k) {
      options.failed.push_back(
          {pipelines[static_cast<std::size_t>(k)], stages[static_cast<std::size_t>(k)]});
    }
    std::sort(options.failed.begin(), options.failed.end());
    for (std::int32_t s = 0; s < options.layout.pp; ++s)
      options.costs.virtual_stages.push_back({1 + draw(2), 1 + draw(3), 1 + draw(2)});
    return options;
  });
}
