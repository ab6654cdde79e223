// What the replay charges ReCycle (sim/replay/replay_rates.hpp): the job's own schedule is the
// baseline, and an adaptive plan's rate is its slowdown against that schedule, timed alike (the
// replay's clock then charges no less than the fault-free time: replay_test.cpp). Worked on bare
// compute times (F = I = W = 1 us, a free network and a free optimizer), where 1F1B's iteration is
// (m + p - 1)(F + I + W).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "planner/job_model.hpp"
#include "profiles/job.hpp"
#include "sim/replay/replay.hpp"
#include "sim/replay/replay_rates.hpp"
#include "sim/replay/shared_plans.hpp"
#include "traces/native_csv.hpp"

namespace {

using recycle::Nanos;
using recycle::planner::WorkerId;

constexpr Nanos kUnit = 1'000;  // F, I and W each take 1 us

/// A 1F1B job of PP `pp` x DP `dp` with `m` micro-batches per pipeline, on bare compute times,
/// each worker on a node of its own (slot n holds worker n = dp x pp + stage); no detection,
/// checkpoint or restart costs.
recycle::planner::JobModel unit_job(int pp, int dp, int m) {
  const auto job = recycle::profiles::job_from_json(
      nlohmann::json{
          {"model", "gpt3-350m"},
          {"hardware", "a100-80g"},
          {"parallel",
           {{"tp", 1}, {"pp", pp}, {"dp", dp}, {"microbatch_size", 1}, {"global_batch", dp * m}}},
          {"schedule", "1f1b"},
          {"cluster", {{"gpus_per_node", 1}}},
          {"detection", {{"heartbeat_s", 0}}},
          {"checkpoint", {{"interval_s", 100'000}, {"write_s", 0}, {"load_s", 0}}},
          {"restart", {{"job_restart_s", 0}, {"node_join_s", 0}, {"reconfigure_s", 0}}}},
      "job.json");
  recycle::planner::JobModel model = recycle::planner::job_model(job);
  model.model = recycle::planner::CostModel::compute_only(
      recycle::planner::Costs::uniform(pp, {kUnit, kUnit, kUnit}));
  return model;
}

}  // namespace

TEST_CASE("replay rates: 1F1B's fault-free iteration is (m + p - 1)(F + I + W)") {
  recycle::sim::ReplayRates rates(unit_job(4, 8, 8), nullptr);
  CHECK(rates.fault_free() == (8 + 4 - 1) * 3 * kUnit);
}

TEST_CASE("replay rates: a ReCycle plan that outruns the job's schedule is reported as such") {
  // PP 4 x DP 8, m 8: 1F1B runs 33 us. One failed worker re-routes its 8 micro-batches to 7
  // peers: a peer runs at most 10 micro-batches, 30 us of work, which a split backward and a
  // staggered optimizer fit within 33 us: the plan is faster than the job's own schedule. (The rule
  // before charged the plan's slowdown against ReCycle's own fault-free plan, which also splits the
  // backward and staggers the optimizer: 32 / 27 x 33 us = 39.1 us.)
  recycle::sim::ReplayRates rates(unit_job(4, 8, 8), nullptr);
  const auto plan = rates.recycle({WorkerId{2, 1}}, {31, 31});
  REQUIRE(plan.has_value());
  CHECK(*plan < 33 * kUnit);
  CHECK(*plan >= 30 * kUnit);  // the busiest peer's own work
  REQUIRE(rates.outrun().has_value());
  CHECK(rates.outrun()->failed_workers == 1);
  CHECK(rates.outrun()->plan == *plan);
  CHECK(rates.outrun()->fault_free == 33 * kUnit);
}

TEST_CASE("replay rates: a ReCycle plan slower than the job's schedule is charged its own time") {
  // PP 4 x DP 2, m 8: one failed worker leaves its stage one live worker carrying all 16
  // micro-batches, 48 us of work at least, against 1F1B's 33 us. On a free network the
  // baseline's fast estimate is its iteration, so the rate is the plan's own period.
  recycle::sim::ReplayRates rates(unit_job(4, 2, 8), nullptr);
  const auto plan = rates.recycle({WorkerId{1, 2}}, {7, 7});
  REQUIRE(plan.has_value());
  CHECK(*plan >= 48 * kUnit);
  CHECK_FALSE(rates.outrun().has_value());
  // A stage with no live worker has no plan.
  CHECK_FALSE(rates.recycle({WorkerId{0, 2}, WorkerId{1, 2}}, {6, 6}).has_value());
}

TEST_CASE("replay: a repaired node fills the hole whose return speeds ReCycle up most") {
  // PP 4 x DP 2, m 8; the last stage costs twice the others (an output layer). Workers (0, 1)
  // and (0, 3) fail (nodes 1 and 3); node 1 comes back. Filling its own slot leaves stage 3 with
  // one live worker carrying 16 micro-batches of 6 us: at least 96 us an iteration. Filling slot 3
  // instead leaves stage 1 so loaded (16 x 3 us = 48 us) beside stage 3's own 8 x 6 us = 48 us,
  // so node 1 must take slot 3 (the lowest-slot rule would put it back in slot 1).
  recycle::planner::JobModel model = unit_job(4, 2, 8);
  model.model.compute.virtual_stages.back() = {2 * kUnit, 2 * kUnit, 2 * kUnit};
  const auto parsed = recycle::traces::parse_native_csv(
      "# nodes: 8\n# duration_s: 1\ntime_s,node,event,cause\n"
      "0.1,1,down,x\n0.2,3,down,x\n0.5,1,up,\n",
      "trace.csv", {});
  recycle::sim::ReplayOptions options;
  options.policies = {recycle::sim::PolicyKind::kRecycle};
  const recycle::sim::ReplayResult r = recycle::sim::replay(model, parsed.trace, options);
  recycle::sim::ReplayRates rates(model, nullptr);
  const Nanos stage3_open = *rates.recycle({WorkerId{0, 3}}, {7, 7});
  const Nanos stage1_open = *rates.recycle({WorkerId{0, 1}}, {7, 7});
  REQUIRE(stage3_open >= 96 * kUnit);
  REQUIRE(stage1_open < stage3_open);
  const auto& timeline = r.policies.front().timeline;
  REQUIRE(!timeline.empty());
  const double after_join = timeline.back().iterations_per_s;
  CHECK(after_join ==
        doctest::Approx(1e9 / static_cast<double>(std::max(stage1_open, rates.fault_free()))));
}

TEST_CASE("replay rates: Oobleck on 126 of make run's 128 workers splits the batch its way") {
  // GPT-3 175B, PP 8 x DP 16, m 64: 126 workers make 14 pipelines of 8 stages and 2 of 7, and
  // Oobleck's min-max split gives the 8-stage ones 65 micro-batches (batch_split_test.cpp works
  // the split by hand on 1F1B's (n + p - 1) law). The slowest pipeline is then an 8-stage one
  // with 65: the job's own template with one micro-batch more than fault-free, so its iteration
  // is the fault-free one plus one stage-time of 1F1B's, T0 x 72 / 71 to within the
  // all-reduce's share (which does not grow with micro-batches): 13.98 s.
  const auto job = recycle::profiles::load_job(std::string(RECYCLE_SOURCE_DIR) +
                                               "/profiles/jobs/gpt3-175b-a100-1024.json");
  recycle::sim::ReplayRates rates(recycle::planner::job_model(job), nullptr);
  const double t0 = recycle::to_seconds(rates.fault_free());
  const auto oobleck = rates.oobleck(126, {126, 126});
  REQUIRE(oobleck.has_value());
  CHECK(recycle::to_seconds(*oobleck) == doctest::Approx(t0 * 72 / 71).epsilon(0.002));
  CHECK(recycle::to_seconds(*oobleck) < t0 * 73 / 71);  // not 66 micro-batches on the slowest
}

TEST_CASE("replay rates: a step-table row keyed by the cluster's live nodes wins over the job's") {
  // `cluster:9` is 9 nodes of the cluster up, spares included (as Oobleck's artifact keys its
  // table); `8` is 8 of the job's nodes up. A configuration with both takes the cluster row,
  // whatever the failure set; one whose cluster count has no row takes the job row.
  const auto table = recycle::sim::StepTable::parse(
      "config,iteration_s\ncluster: 09,0.000040\n8,0.000050\n", "steps.csv");
  REQUIRE(table.cluster_nodes(9).has_value());
  recycle::sim::ReplayRates rates(unit_job(4, 2, 8), &table);
  CHECK(rates.recycle({WorkerId{1, 2}}, {8, 9}) == 40 * kUnit);
  CHECK(rates.recycle({WorkerId{0, 1}}, {8, 9}) == 40 * kUnit);
  CHECK(rates.oobleck(7, {8, 9}) == 40 * kUnit);
  CHECK(rates.recycle({WorkerId{0, 3}}, {8, 8}) == 50 * kUnit);
  // The cluster row counted once among the configurations, however often it answered; the job
  // row once as well.
  CHECK(rates.from_table() == 2);
}

TEST_CASE(
    "replay rates: a job that fits only with its optimizer sharded replays, one pipeline "
    "standing for the others") {
  // Llama 3 405B in its published layout (TP 8, PP 16, DP 128, interleaved with 2 chunks): its
  // state fits a worker only sharded over the 128 ranks (tests/sim/published_throughput_test.cpp).
  // The replay times it with one pipeline whose ring stands for the 127 others, which hold their
  // shards. Elastic's 64 pipelines would reload the state split over 64 ranks (102 GB a worker
  // of stage 0), but each would run 32 micro-batches, and Megatron's interleaved order then
  // holds 47 chunks of 14.9 GB on stage 0 (2 x 15 + 16 warm-up forwards and the first steady one:
  // 701 GB): a configuration that does not fit, which the replay takes as one that cannot run
  // rather than an error.
  auto json = nlohmann::json::parse(R"({
    "model": "llama3-405b", "hardware": "h100-80g",
    "parallel": {"tp": 8, "pp": 16, "dp": 128, "interleave": 2, "microbatch_size": 1,
                 "global_batch": 2048, "sequence_parallel": true, "recompute": "selective"},
    "optimizer": {"distributed": true}, "schedule": "interleaved"})");
  recycle::sim::ReplayRates rates(
      recycle::planner::job_model(recycle::profiles::job_from_json(json, "job.json")), nullptr);
  CHECK(recycle::to_seconds(rates.fault_free()) > 0);
  CHECK_FALSE(rates.pipelines(64).has_value());
}

TEST_CASE("replay: replays of one job that share their plans give what each gives alone") {
  // Two traces of PP 4 x DP 8 whose failure sets overlap: worker (0, 1) alone on both, then with
  // (2, 1) on A and (1, 3) on B. Sharing plans (sim/replay/shared_plans.hpp) must change no
  // figure, whichever replay comes first, and B must plan fewer sets after A than on its own.
  const recycle::planner::JobModel model = unit_job(4, 8, 8);
  const auto trace = [](const std::string& events) {
    return recycle::traces::parse_native_csv(
               "# nodes: 32\n# duration_s: 1\ntime_s,node,event,cause\n" + events, "trace.csv", {})
        .trace;
  };
  const recycle::traces::Trace a = trace("0.1,1,down,x\n0.2,9,down,x\n0.5,1,up,\n0.6,9,up,\n");
  const recycle::traces::Trace b = trace("0.15,1,down,x\n0.3,7,down,x\n0.7,1,up,\n");
  recycle::sim::ReplayOptions options;
  options.policies = {recycle::sim::PolicyKind::kRecycle, recycle::sim::PolicyKind::kAdaptive};
  const auto same = [](const recycle::sim::ReplayResult& x, const recycle::sim::ReplayResult& y) {
    REQUIRE(x.policies.size() == y.policies.size());
    CHECK(x.configurations == y.configurations);
    CHECK(x.outrun.has_value() == y.outrun.has_value());
    for (std::size_t p = 0; p < x.policies.size(); ++p) {
      const auto& u = x.policies[p];
      const auto& v = y.policies[p];
      CHECK(u.samples == v.samples);
      CHECK(u.goodput == v.goodput);
      CHECK(u.lost_s == v.lost_s);
      REQUIRE(u.timeline.size() == v.timeline.size());
      for (std::size_t k = 0; k < u.timeline.size(); ++k) {
        CHECK(u.timeline[k].time == v.timeline[k].time);
        CHECK(u.timeline[k].iterations_per_s == v.timeline[k].iterations_per_s);
      }
    }
  };
  const recycle::sim::ReplayResult alone_a = recycle::sim::replay(model, a, options);
  const recycle::sim::ReplayResult alone_b = recycle::sim::replay(model, b, options);

  recycle::sim::SharedPlans own_a, own_b;
  options.shared_plans = &own_a;
  same(recycle::sim::replay(model, a, options), alone_a);
  options.shared_plans = &own_b;
  same(recycle::sim::replay(model, b, options), alone_b);
  REQUIRE(own_a.size() > 0);
  REQUIRE(own_b.size() > 0);

  recycle::sim::SharedPlans shared;
  options.shared_plans = &shared;
  same(recycle::sim::replay(model, a, options), alone_a);
  const std::size_t after_a = shared.size();
  same(recycle::sim::replay(model, a, options), alone_a);
  CHECK(shared.size() == after_a);  // the same trace again plans nothing new
  same(recycle::sim::replay(model, b, options), alone_b);
  CHECK(shared.size() < own_a.size() + own_b.size());  // the set {(0, 1)} was planned once
  // The other order.
  recycle::sim::SharedPlans reversed;
  options.shared_plans = &reversed;
  same(recycle::sim::replay(model, b, options), alone_b);
  same(recycle::sim::replay(model, a, options), alone_a);
  CHECK(reversed.size() == shared.size());
}
