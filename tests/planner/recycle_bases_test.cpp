// ReCycle on bases of several chunks a worker: the interleaved schedule (any chunk count, in a
// loop) and the V-shaped ones (zb-v, dualpipe-v). Every plan obeys the rules of a loop base
// (every chunk of every micro-batch once, on a live worker of its stage; memory; no deadlock,
// before and after lowering), and small cases are timed by hand.
#include <doctest/doctest.h>

#include <map>
#include <tuple>

#include "core/error.hpp"
#include "planner/language/lower.hpp"
#include "planner/language/timing.hpp"
#include "planner/order_search.hpp"
#include "planner/timing/period.hpp"
#include "test_helpers.hpp"

using namespace recycle::planner;
using namespace recycle::planner::testing;
using recycle::Nanos;

namespace {

struct Base {
  const char* name;
  Layout layout;  ///< dp, pp, microbatches, interleave and placement as the base runs them
};

RecycleOptions options_for(const Base& base, const char* failed, std::optional<std::int32_t> limit,
                           StageCost cost = {1, 1, 1}, bool staggered = true) {
  RecycleOptions options;
  options.layout = base.layout;
  options.base = base.name;
  options.failed = parse_failures(failed, base.layout);
  options.memory_limit = limit;
  options.staggered_optimizer = staggered;
  options.model = CostModel::compute_only(Costs::uniform(base.layout.virtual_stages(), cost));
  return options;
}

/// Every (owner, virtual stage, micro-batch) has one F and one backward (an I and a W, or a fused
/// B), on the worker its route names (the owner's own unless re-routed), which is live.
void check_every_chunk_once(const Schedule& s) {
  const RouteTable routes(s);
  std::map<std::tuple<std::int32_t, std::int32_t, std::int32_t, ActionType>, WorkerId> seen;
  for (const WorkerSchedule& w : s.workers) {
    CHECK_FALSE(std::binary_search(s.failed.begin(), s.failed.end(), w.id));
    for (const Action& a : w.actions) {
      if (!is_compute(a.type)) continue;  // a 2bw plan places its own REDUCE_GRAD and OPT
      const auto [it, fresh] =
          seen.try_emplace({a.owner, a.virtual_stage, a.microbatch, a.type}, w.id);
      CHECK(fresh);
      CHECK(routes.worker_of(a.owner, a.virtual_stage, a.microbatch) == w.id);
    }
  }
  const Layout& l = s.layout;
  std::size_t chunks = 0;
  for (const auto& [key, worker] : seen) {
    const auto [owner, v, mb, type] = key;
    if (type != ActionType::kForward) continue;
    ++chunks;
    const auto has = [&](ActionType t) { return seen.contains({owner, v, mb, t}); };
    CHECK((has(ActionType::kBackward) !=
           (has(ActionType::kBackwardInput) && has(ActionType::kBackwardWeight))));
  }
  CHECK(chunks == static_cast<std::size_t>(l.dp * l.virtual_stages() * l.microbatches));
}

}  // namespace

TEST_CASE("ReCycle on interleaved and V bases: every plan valid and within memory, lowered too") {
  // Layouts: dp, pp, micro-batches (a multiple of pp for interleaved, at least 2 pp for
  // dualpipe-v), chunks.
  const std::vector<Base> bases = {
      {"interleaved", {2, 2, 4, 2}},
      {"interleaved", {3, 4, 8, 2}},
      {"interleaved", {3, 2, 4, 3}},
      {"zb-v", {2, 2, 4, 2, Placement::kV}},
      {"zb-v", {4, 3, 6, 2, Placement::kV}},
      {"dualpipe-v", {3, 4, 8, 2, Placement::kV}},
      {"2bw", {2, 4, 8, 1}},
      {"2bw", {3, 3, 6, 1}},
      {"2bw", {4, 2, 2, 1}},
  };
  for (const Base& base : bases) {
    const Layout& l = base.layout;
    // One failure, two in one stage, a whole pipeline, two in different pipelines and stages.
    std::vector<std::string> sets = {"", "0:0", "1:" + std::to_string(l.pp - 1)};
    if (l.dp >= 3) sets.push_back("0:1,2:1");
    sets.push_back("0:0,1:" + std::to_string(l.pp - 1));
    std::string pipeline;
    for (std::int32_t s = 0; s < l.pp; ++s) pipeline += (s ? ",0:" : "0:") + std::to_string(s);
    sets.push_back(pipeline);
    for (const std::int32_t limit : {l.pp, l.pp + 2, 1}) {
      for (const std::string& failed : sets) {
        CAPTURE(base.name);
        CAPTURE(l.dp);
        CAPTURE(l.pp);
        CAPTURE(l.interleave);
        CAPTURE(limit);
        CAPTURE(failed);
        const RecyclePlan p = plan_recycle(options_for(base, failed.c_str(), limit));
        REQUIRE(p.feasible);
        CHECK(p.schedule.layout == l);
        check_every_chunk_once(p.schedule);
        ValidationOptions options;
        options.memory_limit = limit;
        CHECK_MESSAGE(validate(p.schedule, options).empty(), show(validate(p.schedule, options)));
        const Schedule lowered = lower(p.schedule);
        CHECK_MESSAGE(validate(lowered, options).empty(), show(validate(lowered, options)));
      }
    }
  }
}

/// The plan's makespan with the optimizer barrier (its objective) and makespan_lower_bound for
/// the same routes, F = I = W = 1 s.
std::pair<Nanos, Nanos> barrier_makespan(const Base& base, const char* failed) {
  const RecycleOptions options = options_for(base, failed, std::nullopt, {1, 1, 1}, false);
  const RecyclePlan p = plan_recycle(options);
  REQUIRE(p.feasible);
  const auto timeline = compute_timeline(p.schedule, options.model.compute);
  REQUIRE(timeline.has_value());
  CHECK(timeline->makespan == p.estimate.makespan);
  Schedule skel;
  skel.layout = base.layout;
  skel.failed = options.failed;
  skel.routes = balanced_routes(base.layout, options.failed);
  return {timeline->makespan, makespan_lower_bound(skel, options.model.compute)};
}

TEST_CASE("ReCycle on several chunks: small cases timed by hand") {
  // F = I = W = 1 s, PP 2, two chunks a worker, the optimizer barrier (the objective is the
  // makespan): the plan's makespan and makespan_lower_bound's, each worked out by hand.
  struct Case {
    const char* what;
    Base base;
    const char* failed;
    Nanos made, bound;
  };
  const std::vector<Case> cases = {
      // One micro-batch in a V: its chain F0 F1 F2 F3, I3 I2 I1 I0, W0 is all there is.
      {"a V, one micro-batch", {"zb-v", {1, 2, 1, 2, Placement::kV}}, "", 9, 9},
      // A loop of two micro-batches: stage 1 starts at 1 s with 2 x 2 x 3 = 12 s of work, reached
      // with no idle time (F1a F1b F3a I3a F3b I3b I1a I1b and the four Ws; stage 0 runs I0b at
      // 9-10 s and its two W0s by 13 s).
      {"a loop, two micro-batches", {"interleaved", {1, 2, 2, 2}}, "", 13, 13},
      // (0,0) runs chunks 0 and 3 of both pipelines, 2 x 2 x 3 = 12 s. Before 3 s it can run only
      // the two F0s (F3 waits for F1 and F2 on stage 1, which end at 3 s at the earliest), so
      // 10 s remain at 3 s: 13 s, which an order reaches (F0 F0' . F3 F3' I3 I3' W3 I0 I0' W3'
      // W0 W0', primes for pipeline 1). The bound, blind to that gap, is the 12 s of work.
      {"a V, worker (1,0) failed", {"zb-v", {2, 2, 1, 2, Placement::kV}}, "1:0", 13, 12},
      // (0,1) runs chunks 1 and 3 of both pipelines' micro-batches, 2 x 2 x 2 x 3 = 24 s, and
      // cannot start before the first F0 ends at 1 s.
      {"a loop, worker (1,1) failed", {"interleaved", {2, 2, 2, 2}}, "1:1", 25, 25},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const auto [made, bound] = barrier_makespan(c.base, c.failed);
    CHECK(made == c.made);
    CHECK(bound == c.bound);
  }
}

TEST_CASE("ReCycle on a 2bw base: two weight versions, no flush, and a hand-timed failure") {
  // Without failures: 2bw's own no-bubble period, m (F + I + W) = 8 x 3 = 24 s at pp 4.
  const RecyclePlan fault_free = plan_recycle(options_for({"2bw", {2, 4, 8, 1}}, "", std::nullopt));
  CHECK(fault_free.schedule.weight_versions == 2);
  CHECK(fault_free.estimate.period == 24);
  // PP 2, DP 2, 4 micro-batches, worker (1,1) failed, memory pp = 2: (0,1) runs both pipelines'
  // micro-batches at stage 1, 2 x 4 x 3 = 24 s of work an iteration, and with no flush it never
  // waits: the period is that work. (The plan's lists carry backwards into the next iteration.)
  const RecyclePlan p = plan_recycle(options_for({"2bw", {2, 2, 4, 1}}, "1:1", 2));
  CHECK(p.schedule.weight_versions == 2);
  CHECK(p.schedule.has_lags());
  CHECK(p.estimate.period == 24);
  ValidationOptions limit;
  limit.memory_limit = 2;
  CHECK_MESSAGE(validate(p.schedule, limit).empty(), show(validate(p.schedule, limit)));
}

TEST_CASE("ReCycle's base: unknown names and layouts the base cannot run are refused") {
  RecycleOptions options = options_for({"1f1b", {2, 2, 4, 1}}, "0:1", std::nullopt);
  options.base = "gpipe";
  CHECK_THROWS_AS((void)plan_recycle(options), recycle::InputError);
  options.base = "interleaved";  // needs two chunks or more
  CHECK_THROWS_AS((void)plan_recycle(options), recycle::InputError);
  options.base = "zb-v";  // needs a V of two chunks
  CHECK_THROWS_AS((void)plan_recycle(options), recycle::InputError);
  options.base = "pipedream-flush";  // 1F1B by its paper's name
  CHECK(plan_recycle(options).feasible);
  CHECK(recycle_base_for("zb-h1") == "1f1b");
  CHECK(recycle_base_for("dualpipe-v") == "dualpipe-v");
  CHECK(recycle_base_for("2bw") == "2bw");
}
