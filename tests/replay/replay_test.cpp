// Job replay (sim/replay/replay.hpp): hand-worked scenarios with exact answers, the accounting
// identity, and the properties every policy must have. Iteration times come from step tables so
// that every expected number below is worked out by hand in the comments.
#include <doctest/doctest.h>

#include <numeric>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "planner/job_model.hpp"
#include "profiles/job.hpp"
#include "profiles/link.hpp"
#include "sim/replay/replay.hpp"
#include "sim/replay/replay_report.hpp"
#include "sim/replay/replay_slots.hpp"
#include "sim/replay/spares.hpp"
#include "sim/replay/step_table.hpp"
#include "traces/native_csv.hpp"

namespace {

using recycle::sim::LostCause;
using recycle::sim::PolicyKind;
using recycle::sim::PolicyResult;
using recycle::sim::ReplayResult;

/// PP 4 x DP 2 workers of one GPU each on 8 single-GPU nodes; detection 5 s x 3, checkpoints
/// every 600 s of training taking 60 s, load 300 s, restart 600 s, join 60 s, reconfigure 20 s.
nlohmann::json job_json() {
  return nlohmann::json::parse(R"({
    "model": "gpt3-350m", "hardware": "a100-80g",
    "parallel": {"tp": 1, "pp": 4, "dp": 2, "microbatch_size": 1, "global_batch": 16},
    "cluster": {"nodes": 8, "gpus_per_node": 1},
    "detection": {"heartbeat_s": 5, "missed_beats": 3},
    "checkpoint": {"interval_s": 600, "write_s": 60, "load_s": 300},
    "restart": {"job_restart_s": 600, "node_join_s": 60, "reconfigure_s": 20}
  })");
}

/// Fault-free 10 s; one pipeline 15 s; 7 live nodes 12 s (ReCycle, Oobleck, Bamboo alike).
const char* kSteps = "config,iteration_s\n2x4,10\n1x4,15\n7,12\n6,14\n";

std::string trace_text(const std::string& events, double duration_s = 10'000, int nodes = 8) {
  return "# nodes: " + std::to_string(nodes) + "\n# duration_s: " + std::to_string(duration_s) +
         "\ntime_s,node,event,cause\n" + events;
}

ReplayResult run(const std::string& events, std::vector<PolicyKind> policies,
                 nlohmann::json job = job_json(), const char* steps = kSteps) {
  const recycle::profiles::Job j = recycle::profiles::job_from_json(job, "job.json");
  const recycle::planner::JobModel model = recycle::planner::job_model(j);
  const int nodes = job["cluster"]["nodes"].get<int>();
  const auto trace =
      recycle::traces::parse_native_csv(trace_text(events, 10'000, nodes), "trace.csv", {});
  const recycle::sim::StepTable table = recycle::sim::StepTable::parse(steps, "steps.csv");
  recycle::sim::ReplayOptions options;
  options.policies = std::move(policies);
  options.table = &table;
  return recycle::sim::replay(model, trace.trace, options);
}

double lost(const PolicyResult& p, LostCause c) {
  return p.lost_s[static_cast<std::size_t>(c)];
}

/// Seconds to copy stage `stage`'s state (parameters, gradients, optimizer state) to a rejoining
/// or re-formed worker over the job's network: latency + kept bytes / (per-GPU bandwidth x
/// efficiency).
double state_copy_s(std::int32_t stage) {
  const recycle::profiles::Job j = recycle::profiles::job_from_json(job_json(), "job.json");
  const recycle::planner::JobModel model = recycle::planner::job_model(j);
  const double bandwidth = j.gpu.inter_node_bandwidth * j.gpu.efficiency.network;
  return j.gpu.inter_node_latency + static_cast<double>(model.model.kept_bytes(stage)) / bandwidth;
}

/// elapsed = iterations x T0 + every lost second.
void check_identity(const ReplayResult& r) {
  for (const PolicyResult& p : r.policies) {
    REQUIRE(p.unfit.empty());
    const double sum = std::accumulate(p.lost_s.begin(), p.lost_s.end(), 0.0);
    const double iterations = p.samples / r.samples_per_iteration;
    CHECK(iterations * recycle::to_seconds(r.fault_free_iteration) + sum ==
          doctest::Approx(recycle::to_seconds(r.duration)).epsilon(1e-9));
  }
}

/// Replays `events` under one policy, checks the accounting identity, and returns its result.
PolicyResult run_one(const std::string& events, PolicyKind policy, nlohmann::json job = job_json(),
                     const char* steps = kSteps) {
  const ReplayResult r = run(events, {policy}, std::move(job), steps);
  check_identity(r);
  return r.policies.front();
}

/// Adaptive (the second policy of `r`) took exactly the one action `action` and so trained what the
/// first policy, which always takes it, trains.
void check_adaptive_took_only(const ReplayResult& r, const std::string& action) {
  check_identity(r);
  CHECK(r.policies[1].samples == doctest::Approx(r.policies[0].samples));
  std::vector<std::pair<std::string, std::int64_t>> expected;
  for (const char* a : {"reroute", "reinstantiate", "drop", "restart", "spare"})
    expected.emplace_back(a, a == action ? 1 : 0);
  CHECK(r.policies[1].actions == expected);
}

}  // namespace

TEST_CASE("replay: without failures every policy trains at the fault-free rate") {
  const ReplayResult r = run("", recycle::sim::all_policies());
  check_identity(r);
  // 10,000 s at 10 s per iteration with a 60 s checkpoint after every 600 s of training: 15
  // cycles of 660 s (9,900 s) and 100 s more: 15 x 60 + 10 = 910 iterations of 16 samples.
  for (const PolicyResult& p : r.policies) {
    CAPTURE(recycle::sim::to_string(p.policy));
    CHECK(p.samples == doctest::Approx(910 * 16));
    CHECK(lost(p, LostCause::kCheckpoint) == doctest::Approx(15 * 60));
    CHECK(p.goodput == doctest::Approx(0.91));
    CHECK(p.ettr == doctest::Approx(0.91));
    CHECK(p.failures == 0);
  }
}

TEST_CASE("replay: one failure, checkpoint-restart, by hand") {
  // Node 3 fails at 1,000 s and is back up at 3,000 s (joins at 3,060 s).
  const ReplayResult r = run("1000,3,down,x\n3000,3,up,\n", {PolicyKind::kCheckpoint});
  check_identity(r);
  const PolicyResult& p = r.policies.front();
  // 0-600 train (60 it.), 600-660 write, 660-1,000 train (34 it., thrown away: redo 340 s);
  // detection 1,000-1,015; waiting 1,015-3,060 (2,045 s); restart 600 + 300 s until 3,960;
  // then 6,040 s = 9 x (600 + 60) + 100: 9 writes, 550 it. So 60 + 550 = 610 iterations.
  CHECK(p.samples == doctest::Approx(610 * 16));
  CHECK(lost(p, LostCause::kDetection) == doctest::Approx(15));
  CHECK(lost(p, LostCause::kRedo) == doctest::Approx(340));
  CHECK(lost(p, LostCause::kRepairWait) == doctest::Approx(2'045));
  CHECK(lost(p, LostCause::kRestart) == doctest::Approx(900));
  CHECK(lost(p, LostCause::kCheckpoint) == doctest::Approx(600));
  CHECK(p.fallbacks == 1);
  CHECK(p.failures == 1);
}

TEST_CASE("replay: one failure, elastic, by hand") {
  const ReplayResult r = run("1000,3,down,x\n3000,3,up,\n", {PolicyKind::kElastic});
  check_identity(r);
  const PolicyResult& p = r.policies.front();
  // As checkpoint-restart until 1,015 s (60 it. kept, redo 340 s); then restart at once with
  // one pipeline (15 s per iteration): 900 s restart until 1,915; train 1,915-3,060 = 1,145 s
  // with a write after 600 s: 1,085 s of training = 72.333 it. (degraded 1,085 x 1/3 s).
  // At 3,060 the pipeline is whole again: checkpoint and restart (60 + 900 s) until 4,020;
  // then 5,980 s = 9 x 660 + 40: 9 writes, 544 it. Total 60 + 72.333 + 544 = 676.333 it.
  CHECK(p.samples == doctest::Approx((60 + 1085.0 / 15 + 544) * 16));
  CHECK(lost(p, LostCause::kRedo) == doctest::Approx(340));
  CHECK(lost(p, LostCause::kRestart) == doctest::Approx(900));
  CHECK(lost(p, LostCause::kReconfiguration) == doctest::Approx(960));
  CHECK(lost(p, LostCause::kDegraded) == doctest::Approx(1085.0 / 3));
  CHECK(lost(p, LostCause::kCheckpoint) == doctest::Approx(11 * 60));
}

TEST_CASE("replay: a failure during elastic's restart starts it again, no second rollback") {
  const PolicyResult p =
      run_one("1000,3,down,x\n1500,1,down,x\n5000,2,down,x\n", PolicyKind::kElastic);
  // 1,000 s: node 3 fails, rollback 1 (redo 340 s, as above); one pipeline on nodes 0, 1, 2, 4
  // restarts until 1,000 + 15 + 900 = 1,915 s. 1,500 s: node 1 fails during that restart: no
  // training since the rollback (redo 0), the restart begins again (node 5 fills the slot) and
  // ends at 1,500 + 15 + 900 = 2,415 s; no second rollback. Then one pipeline at 15 s: writes
  // at 3,015, 3,675, 4,335 (each committed 60 s later) and 4,995; node 2 fails at 5,000 during
  // that last write, so the 600 s trained between 4,395 and 4,995 (40 it.) are lost: rollback
  // 2, redo 40 x 10 = 400 s. Nodes 3, 1 and 2 each held a slot: 3 failures. Restarts: 485 s
  // of the first (1,015-1,500), then two whole ones of 900 s (the third from 5,015 s).
  CHECK(p.fallbacks == 2);
  CHECK(p.failures == 3);
  CHECK(lost(p, LostCause::kRedo) == doctest::Approx(340 + 0 + 400));
  CHECK(lost(p, LostCause::kRestart) == doctest::Approx(485 + 900 + 900));
}

TEST_CASE("replay: one failure, ReCycle, by hand") {
  const ReplayResult r = run("1000,3,down,x\n3000,3,up,\n", {PolicyKind::kRecycle});
  check_identity(r);
  const PolicyResult& p = r.policies.front();
  // Detection 1,000-1,015 (the iteration in progress had just ended: nothing to redo); train at
  // 12 s (7 live nodes) until the node has joined at 3,060, then copy the stage's state from a
  // peer over the network.
  const double copy = state_copy_s(3);
  CHECK(lost(p, LostCause::kReconfiguration) == doctest::Approx(copy).epsilon(1e-6));
  CHECK(lost(p, LostCause::kDetection) == doctest::Approx(15));
  CHECK(lost(p, LostCause::kRedo) == doctest::Approx(0));
  CHECK(lost(p, LostCause::kRestart) == doctest::Approx(0));
  // Degraded: 1,015-3,060 holds 2,045 s, less the writes at 1,275, 1,935 and 2,595 s (340 s of
  // training before the failure, then every 600 s): 1,865 s at 12 s lose 1,865 x (1 - 10/12).
  CHECK(lost(p, LostCause::kDegraded) == doctest::Approx(1865.0 / 6));
  CHECK(p.fallbacks == 0);
}

TEST_CASE("replay: one failure, Oobleck, by hand") {
  const ReplayResult r = run("1000,3,down,x\n3000,3,up,\n", {PolicyKind::kOobleck});
  check_identity(r);
  const PolicyResult& p = r.policies.front();
  // Detection 1,000-1,015 (nothing to redo, as for ReCycle); then a reconfiguration of 20 s plus
  // copying the lost stage 3 from another pipeline (c); 7 live workers train at 12 s. At 3,060
  // the node has joined: 20 s + c again, then 10 s per iteration.
  const double c = state_copy_s(3);
  REQUIRE(c < 20);  // the arithmetic below assumes the last write ends before 10,000 s
  // Writes (each after 600 s of training): 340 s trained before the failure, so at 1,295 + c,
  // 1,955 + c and 2,615 + c; at 3,060, 385 - c s trained since, so the next at 3,295 + 2c and
  // then every 660 s: 11 more, the last ending at 9,955 + 2c.
  // Training at 12 s: 3,060 - 1,035 - c - 3 x 60 = 1,845 - c; at 10 s after 3,080 + c:
  // 10,000 - 3,080 - c - 11 x 60 = 6,260 - c.
  CHECK(p.samples == doctest::Approx((94 + (1845 - c) / 12 + (6260 - c) / 10) * 16));
  CHECK(lost(p, LostCause::kDetection) == doctest::Approx(15));
  CHECK(lost(p, LostCause::kRedo) == doctest::Approx(0));
  CHECK(lost(p, LostCause::kReconfiguration) == doctest::Approx(40 + 2 * c));
  CHECK(lost(p, LostCause::kCheckpoint) == doctest::Approx(15 * 60));
  CHECK(lost(p, LostCause::kDegraded) == doctest::Approx((1845 - c) / 6));
  CHECK(lost(p, LostCause::kRestart) == doctest::Approx(0));
  CHECK(p.fallbacks == 0);
}

TEST_CASE("replay: one failure, Bamboo, by hand") {
  const ReplayResult r = run("1000,3,down,x\n3000,3,up,\n", {PolicyKind::kBamboo}, job_json(),
                             "config,iteration_s\n2x4,10\n1x4,15\n");
  check_identity(r);
  const PolicyResult& p = r.policies.front();
  // Detection 1,000-1,015; stage 3's predecessor takes over (no redo), and one covering node of
  // 7 live passes 2.5 %: Bamboo re-forms one whole pipeline (20 s) and trains at 15 s from 1,035.
  // At 3,060 the node has joined and 8 nodes make two pipelines: 20 s more, then 10 s.
  // Writes as for Oobleck with c = 0: 1,295, 1,955, 2,615, then 3,295 and every 660 s to 9,895.
  // Training at 15 s: 3,060 - 1,035 - 180 = 1,845 s (123 it.); at 10 s: 10,000 - 3,080 - 660 =
  // 6,260 s (626 it.). With the 94 before the failure: 843 iterations.
  CHECK(p.samples == doctest::Approx(843 * 16));
  CHECK(lost(p, LostCause::kDetection) == doctest::Approx(15));
  CHECK(lost(p, LostCause::kRedo) == doctest::Approx(0));
  CHECK(lost(p, LostCause::kReconfiguration) == doctest::Approx(40));
  CHECK(lost(p, LostCause::kCheckpoint) == doctest::Approx(15 * 60));
  CHECK(lost(p, LostCause::kDegraded) == doctest::Approx(1845.0 / 3));
  CHECK(lost(p, LostCause::kRedundancy) == doctest::Approx(0));  // the table's 2x4 is T0
  CHECK(p.fallbacks == 0);
}

TEST_CASE("replay: a stage with every replica down makes ReCycle fall back") {
  // Nodes 1 and 5 are stage 1 of pipelines 0 and 1; both down 1,000-3,000 s.
  const ReplayResult r =
      run("1000,1,down,x\n1000,5,down,x\n3000,1,up,\n3000,5,up,\n", {PolicyKind::kRecycle});
  check_identity(r);
  const PolicyResult& p = r.policies.front();
  CHECK(p.fallbacks == 1);
  CHECK(lost(p, LostCause::kRestart) == doctest::Approx(900));
  CHECK(lost(p, LostCause::kRedo) == doctest::Approx(340));
  CHECK(lost(p, LostCause::kRepairWait) > 2'000);
}

TEST_CASE("replay: Bamboo re-forms from the data-parallel peers when a replica is lost") {
  // PP 4 x DP 16 on 64 nodes, so that one or two covering nodes stay under Bamboo's 2.5 %
  // reconfiguration threshold and the take-over lasts: stages 0 and 2 of pipeline 0 are covered
  // by their predecessors; stages 1 and 2 lose stage 2's replica (it was on stage 1), so no
  // take-over runs, but both stages live on the other 15 pipelines: the job re-forms whole
  // pipelines from the 62 live nodes (15 of them, 20 s) without going back to its checkpoint.
  // The failure comes at 1,000 s, after 34 whole iterations since the write at 600-660 s:
  // nothing in progress to redo.
  auto job = job_json();
  job["parallel"]["dp"] = 16;
  job["parallel"]["global_batch"] = 64;
  job["cluster"]["nodes"] = 64;
  const std::string apart = "1000,0,down,x\n1000,2,down,x\n3000,0,up,\n3000,2,up,\n";
  const std::string consecutive = "1000,1,down,x\n1000,2,down,x\n3000,1,up,\n3000,2,up,\n";
  const char* steps = "config,iteration_s\n16x4,10\n15x4,11\n";
  const ReplayResult a = run(apart, {PolicyKind::kBamboo}, job, steps);
  const ReplayResult c = run(consecutive, {PolicyKind::kBamboo}, job, steps);
  check_identity(a);
  check_identity(c);
  CHECK(a.policies.front().fallbacks == 0);
  CHECK(lost(a.policies.front(), LostCause::kRedo) == 0);
  const PolicyResult& p = c.policies.front();
  CHECK(p.fallbacks == 0);
  CHECK(lost(p, LostCause::kRedo) == 0);
  CHECK(lost(p, LostCause::kRestart) == 0);
  // 20 s at the failure, 20 s more when both nodes have joined (3,060 s): 16 pipelines again.
  CHECK(lost(p, LostCause::kReconfiguration) == doctest::Approx(40));
}

TEST_CASE("replay: a stage's state is gone only when it is down on every pipeline") {
  // PP 4 x DP 2 on 8 single-GPU nodes: slot n holds worker (n / 4, n % 4).
  recycle::sim::JobSlots slots(8, 8, recycle::planner::Layout{2, 4, 8, 1}, 1, 1);
  CHECK(slots.every_stage_live());
  slots.node_down(1);               // stage 1 of pipeline 0
  slots.node_down(2);               // stage 2 of pipeline 0: its replica, on stage 1, is gone too
  CHECK(slots.every_stage_live());  // both live on pipeline 1
  slots.node_down(5);               // stage 1 of pipeline 1
  CHECK_FALSE(slots.every_stage_live());
}

TEST_CASE("replay: every node down: every policy loses what it trained since its checkpoint") {
  // All 8 nodes fail at 100 s and none comes back. Until then every policy trains at T0 = 10 s
  // (the table's 2x4 is Bamboo's fault-free time too: no redundancy): 10 iterations, and the
  // first checkpoint would come after 600 s of training, so none is saved. With every node gone
  // no configuration runs again and no replica survives: each policy rolls back once, throwing
  // away the 10 iterations (redo 10 x T0 = 100 s), and keeps 0 samples.
  std::string events;
  for (int node = 0; node < 8; ++node) events += "100," + std::to_string(node) + ",down,x\n";
  const ReplayResult r =
      run(events, recycle::sim::all_policies(), job_json(), "config,iteration_s\n2x4,10\n1x4,15\n");
  check_identity(r);
  for (const PolicyResult& p : r.policies) {
    CAPTURE(recycle::sim::to_string(p.policy));
    CHECK(p.samples == 0);
    CHECK(p.goodput == 0);
    CHECK(p.fallbacks == 1);
    CHECK(lost(p, LostCause::kRedo) == doctest::Approx(100));
    CHECK(lost(p, LostCause::kRedundancy) == 0);
    // The 8 nodes fail at one instant: one burst, all of them in slots.
    CHECK(p.failures == 8);
  }
}

TEST_CASE("replay: Bamboo re-forms whole pipelines when covering nodes pass 2.5 %") {
  // On the 8-node job one covering node is 1/7 of the live ones: Bamboo re-forms at once, from
  // 7 nodes one whole pipeline (15 s per iteration), after its 20 s reconfiguration.
  const ReplayResult r = run("1000,3,down,x\n", {PolicyKind::kBamboo}, job_json(),
                             "config,iteration_s\n2x4,10\n1x4,15\n");
  check_identity(r);
  const PolicyResult& p = r.policies.front();
  CHECK(p.fallbacks == 0);
  CHECK(lost(p, LostCause::kReconfiguration) == doctest::Approx(20));
  CHECK(lost(p, LostCause::kDetection) == doctest::Approx(15));
  // Degraded: 1,035 s to 10,000 s at 15 s instead of 10 s, less 14 checkpoint writes (340 s of
  // training before the failure, so the next at 1,295 s, then every 660 s up to 9,875 s):
  // 8,965 - 840 = 8,125 s running lose a third each.
  CHECK(lost(p, LostCause::kCheckpoint) == doctest::Approx(15 * 60));
  CHECK(lost(p, LostCause::kDegraded) == doctest::Approx(8125.0 / 3));
}

TEST_CASE("replay: more failures never train more samples") {
  const std::string one = "1000,3,down,x\n3000,3,up,\n";
  const std::string two = one + "4000,6,down,x\n5000,6,up,\n";
  const ReplayResult a = run(one, recycle::sim::all_policies());
  const ReplayResult b = run(two, recycle::sim::all_policies());
  for (std::size_t i = 0; i < a.policies.size(); ++i) {
    CAPTURE(recycle::sim::to_string(a.policies[i].policy));
    CHECK(b.policies[i].samples <= a.policies[i].samples);
    CHECK(b.policies[i].failures == 2);
  }
  check_identity(b);
}

TEST_CASE("replay: simulated rates, deterministic, Bamboo pays for redundancy") {
  // No step table: every rate comes from the planner and the simulator.
  const std::string events = "1000,3,down,x\n3000,3,up,\n4000,6,down,x\n8000,6,up,\n";
  const auto json = [&] {
    const recycle::profiles::Job j = recycle::profiles::job_from_json(job_json(), "job.json");
    const recycle::planner::JobModel model = recycle::planner::job_model(j);
    const auto trace = recycle::traces::parse_native_csv(trace_text(events), "trace.csv", {});
    recycle::sim::ReplayOptions options;
    options.policies = recycle::sim::all_policies();
    return recycle::sim::replay_json(recycle::sim::replay(model, trace.trace, options)).dump();
  };
  const std::string first = json();
  CHECK(first == json());
  const auto r = nlohmann::json::parse(first);
  for (const auto& p : r["policies"]) {
    CAPTURE(p["policy"].get<std::string>());
    CHECK(p["samples"].get<double>() > 0);
    const double redundancy = p["lost_s"]["redundancy"].get<double>();
    if (p["policy"] == "bamboo") {
      CHECK(redundancy > 0);
    } else {
      CHECK(redundancy == 0);
    }
  }
}

TEST_CASE("replay: bad input names the field") {
  auto job = job_json();
  job["cluster"]["spares"] = 3;  // 8 nodes cannot be 8 for the job plus 3 spares
  CHECK_THROWS_WITH_AS(static_cast<void>(recycle::profiles::job_from_json(job, "job.json")),
                       doctest::Contains("job.json: cluster.nodes"), recycle::InputError);
  job = job_json();
  job["cluster"]["nodes"] = 4;  // fewer than the 8 the job needs
  CHECK_THROWS_WITH_AS(static_cast<void>(recycle::profiles::job_from_json(job, "job.json")),
                       doctest::Contains("cannot hold the job"), recycle::InputError);
  job = job_json();
  job["checkpoint"]["interval_s"] = 0;
  CHECK_THROWS_WITH_AS(static_cast<void>(recycle::profiles::job_from_json(job, "job.json")),
                       doctest::Contains("checkpoint.interval_s"), recycle::InputError);
  // A checkpoint interval or a step time > 0 that rounds to 0 ns (1e-12 s) would take no time:
  // refused where it is given, as the zero interval above.
  job = job_json();
  job["checkpoint"]["interval_s"] = 1e-12;
  CHECK_THROWS_WITH_AS(static_cast<void>(recycle::profiles::job_from_json(job, "job.json")),
                       doctest::Contains("job.json: checkpoint.interval_s: '1e-12' seconds rounds "
                                         "to 0 ns"),
                       recycle::InputError);
  for (const char* steps : {"config,iteration_s\n2x4,1e-12\n", "config,iteration_s\n1x4,1e-12\n"}) {
    CAPTURE(steps);
    CHECK_THROWS_WITH_AS(static_cast<void>(run("", {PolicyKind::kRecycle}, job_json(), steps)),
                         doctest::Contains("steps.csv:2: '1e-12' seconds rounds to 0 ns"),
                         recycle::InputError);
  }
  job = job_json();
  job["detection"]["every"] = 1;
  CHECK_THROWS_AS(static_cast<void>(recycle::profiles::job_from_json(job, "job.json")),
                  recycle::InputError);
  CHECK_THROWS_WITH_AS(static_cast<void>(run("", {PolicyKind::kRecycle}, job_json(),
                                             "config,iteration_s\n2x4,-1\n")),
                       doctest::Contains("steps.csv:2"), recycle::InputError);
  CHECK_THROWS_AS(static_cast<void>(recycle::sim::parse_policy("spot", "--policy")),
                  recycle::InputError);
}

TEST_CASE("replay: elastic re-forms whole pipelines from the nodes left") {
  // PP 2 x DP 2 on 4 single-GPU nodes: node 1 holds (0,1), node 2 holds (1,0). With both down no
  // pipeline is whole, but nodes 0 and 3 form one.
  recycle::sim::JobSlots slots(4, 4, recycle::planner::Layout{2, 2, 4, 1}, 1, 1);
  CHECK(slots.node_down(1) == 1);
  CHECK(slots.node_down(2) == 2);
  CHECK(slots.complete_pipelines() == 0);
  slots.regroup();
  CHECK(slots.complete_pipelines() == 1);
  CHECK(slots.live_nodes() == 2);
  CHECK(slots.active_pipelines() == 1);
  // Node 3 moved into slot 1, (0,1): its failure breaks that pipeline again; the parked
  // pipeline's workers are not failed ones.
  CHECK(slots.node_down(3) == 1);
  CHECK(slots.complete_pipelines() == 0);
  CHECK(slots.failed_workers() == std::vector<recycle::planner::WorkerId>{{0, 1}});
  CHECK(slots.live_workers() == 1);
  // Nodes 1 and 2 come back: three live nodes make one pipeline; with node 3 back, two.
  slots.node_ready(1);
  slots.node_ready(2);
  slots.regroup();
  CHECK(slots.active_pipelines() == 1);
  CHECK(slots.complete_pipelines() == 1);
  CHECK(slots.spares() == 1);
  slots.node_ready(3);
  slots.regroup();
  CHECK(slots.active_pipelines() == 2);
  CHECK(slots.complete_pipelines() == 2);
  CHECK(slots.live_nodes() == 4);
}

TEST_CASE(
    "replay: fewer live nodes than one pipeline: only a re-split runs, none divides by zero") {
  // Five of the 8 nodes down from 1,000 s to 5,000 s: three nodes cannot hold a 4-stage pipeline.
  // Every policy that keeps the job's 4 stages waits for the repair; Oobleck (and adaptive, which
  // re-instantiates as it does) restarts from the checkpoint on a 3-stage template.
  std::string events;
  for (const int node : {0, 1, 2, 4, 5}) events += "1000," + std::to_string(node) + ",down,x\n";
  for (const int node : {0, 1, 2, 4, 5}) events += "5000," + std::to_string(node) + ",up,\n";
  const ReplayResult r =
      run(events, recycle::sim::all_policies(), job_json(), "config,iteration_s\n2x4,10\n1x4,15\n");
  check_identity(r);
  for (const PolicyResult& p : r.policies) {
    CAPTURE(recycle::sim::to_string(p.policy));
    const bool resplits = p.policy == PolicyKind::kOobleck || p.policy == PolicyKind::kAdaptive;
    if (resplits) {
      CHECK(lost(p, LostCause::kRepairWait) == 0);
    } else {
      CHECK(lost(p, LostCause::kRepairWait) > 3'000);
    }
  }
}

TEST_CASE(
    "replay: a configuration timed faster than the job's schedule runs at the fault-free rate") {
  // A measured row says 7 live nodes run at 8 s, faster than the fault-free 10 s: the baseline is
  // the job with every worker up, so ReCycle, Oobleck and Bamboo are charged 10 s there and lose
  // nothing to degraded throughput; without failures or writes lost, goodput is 0.91 (as without
  // failures) less the detection and nothing else for ReCycle.
  const ReplayResult r = run("1000,3,down,x\n3000,3,up,\n", recycle::sim::all_policies(),
                             job_json(), "config,iteration_s\n2x4,10\n1x4,15\n7,8\n");
  check_identity(r);
  for (const PolicyResult& p : r.policies) {
    CAPTURE(recycle::sim::to_string(p.policy));
    CHECK(p.goodput <= 1.0);
    for (const double s : p.lost_s) CHECK(s >= 0);
    if (p.policy == PolicyKind::kRecycle) {
      CHECK(lost(p, LostCause::kDegraded) == 0);
      // 10,000 s less 15 s of detection and the rejoin's state copy, 15 writes of 60 s, at 10 s.
      CHECK(p.samples == doctest::Approx((10'000 - 15 - state_copy_s(3) - 15 * 60) / 10 * 16));
    }
  }
}

TEST_CASE("replay: on random traces no policy loses negative time or exceeds goodput 1") {
  // Simulated rates (no step table) on the PP 4 x DP 2 job and on PP 2 x DP 4 (where one failed
  // node can take a whole pipeline's stage and the ReCycle plan re-routes over three peers).
  std::uint64_t state = 12345;
  const auto next = [&](std::uint64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % n;
  };
  for (const auto& [pp, dp] : {std::pair{4, 2}, std::pair{2, 4}}) {
    for (int trial = 0; trial < 6; ++trial) {
      std::string events;
      std::vector<std::pair<int, std::string>> rows;
      for (int k = 0; k < 4; ++k) {
        const int node = static_cast<int>(next(8));
        const int down = 200 + static_cast<int>(next(8'000));
        const int up = down + 100 + static_cast<int>(next(3'000));
        rows.emplace_back(down, std::to_string(down) + "," + std::to_string(node) + ",down,x\n");
        rows.emplace_back(up, std::to_string(up) + "," + std::to_string(node) + ",up,\n");
      }
      std::stable_sort(rows.begin(), rows.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      // A node that is already down cannot fail again before it is up: keep the trace legal.
      std::vector<int> down_count(8, 0);
      for (const auto& [time, row] : rows) {
        const int node = std::stoi(row.substr(row.find(',') + 1));
        const bool is_down = row.find(",down,") != std::string::npos;
        if (is_down ? down_count[node]++ == 0 : --down_count[node] == 0) events += row;
      }
      auto job = job_json();
      job["parallel"]["pp"] = pp;
      job["parallel"]["dp"] = dp;
      const recycle::profiles::Job j = recycle::profiles::job_from_json(job, "job.json");
      const recycle::planner::JobModel model = recycle::planner::job_model(j);
      const auto trace = recycle::traces::parse_native_csv(trace_text(events), "trace.csv", {});
      recycle::sim::ReplayOptions options;
      options.policies = recycle::sim::all_policies();
      const ReplayResult r = recycle::sim::replay(model, trace.trace, options);
      CAPTURE(events);
      check_identity(r);
      for (const PolicyResult& p : r.policies) {
        CAPTURE(recycle::sim::to_string(p.policy));
        CHECK(p.goodput <= 1.0);
        CHECK(p.ettr <= 1.0);
        for (const double s : p.lost_s) CHECK(s >= 0);
      }
    }
  }
}

TEST_CASE("replay: how many spares checkpoint-restart needs to match ReCycle, by hand") {
  // Node 3 fails at 1,000 s and is back (joined) at 9,960 s. ReCycle trains on 7 nodes at 12 s
  // meanwhile: detection 15 s, then 8,945 s of which 14 writes (1,275 s, then every 660 s to
  // 9,855 s) leave 8,105 s at 12 s instead of 10 (8,105 / 6 = 1,350.8 s lost), plus the state
  // copy at the rejoin and 15 writes in all (900 s): 2,265.8 s + copy lost. Checkpoint-restart
  // without spares waits for the repair, losing far more; with one spare node (the trace watches
  // 8 nodes, so the 9th never fails) it loses detection 15 s, the 340 s since its checkpoint,
  // the 900 s restart, and 13 writes (600 s, then from 1,915 s every 660 s to 9,775 s): 2,035 s,
  // less than ReCycle. So one spare matches, and it trains (10,000 - 2,035) / 10 iterations.
  const recycle::profiles::Job j = recycle::profiles::job_from_json(job_json(), "job.json");
  const recycle::planner::JobModel model = recycle::planner::job_model(j);
  const auto trace =
      recycle::traces::parse_native_csv(trace_text("1000,3,down,x\n9900,3,up,\n"), "trace.csv", {})
          .trace;
  const recycle::sim::StepTable table = recycle::sim::StepTable::parse(kSteps, "steps.csv");
  recycle::sim::ReplayOptions options;
  options.policies = recycle::sim::all_policies();
  options.table = &table;
  const ReplayResult r = recycle::sim::replay(model, trace, options);
  const PolicyResult& rc = r.policies.front();
  REQUIRE(rc.policy == PolicyKind::kRecycle);
  CHECK(lost(rc, LostCause::kDegraded) == doctest::Approx(8105.0 / 6));
  const auto m = recycle::sim::match_spares(
      model, [&](std::int64_t) { return trace; }, options, rc, 8);
  CHECK(m.matched);
  CHECK(m.extra == 1);
  CHECK(m.target == rc.goodput);
  CHECK(m.checkpoint.samples == doctest::Approx((10'000 - 2'035) / 10.0 * 16));
  CHECK(m.checkpoint_gpu_hours == doctest::Approx(9 * 10'000 / 3600.0 / m.checkpoint.samples));
}

TEST_CASE("replay: adaptive re-routes where re-routing costs least, by hand") {
  // The one-failure scenario of the ReCycle case above: 7 live nodes run at 12 s whichever way
  // (the table's row is by live nodes), so re-routing (no switching cost) beats re-instantiating
  // (20 s more) and dropping a pipeline (a 900 s restart, the 340 s since the checkpoint, and 15 s
  // per iteration). When the node has joined every hole is filled: back to the job's own
  // configuration, which is no action. So adaptive trains exactly what ReCycle does.
  const ReplayResult r =
      run("1000,3,down,x\n3000,3,up,\n", {PolicyKind::kRecycle, PolicyKind::kAdaptive});
  check_adaptive_took_only(r, "reroute");
}

TEST_CASE("replay: adaptive drops a pipeline where the survivors would crawl, by hand") {
  // As above but 7 live nodes crawl at 100 s an iteration. The trace's one failure among 8 nodes
  // over 10,000 s puts the next event 5,000 s away (half the job's MTBF of 10,000 s): re-routing
  // would lose 5,000 x (1 - 10/100) = 4,500 s, dropping to one pipeline 900 + 340 + 5,000 / 3 =
  // 2,907 s. At the rejoin, re-growing (a write and a restart, 960 s) beats a restart that throws
  // away the work since the checkpoint. That is elastic's course: the same samples.
  const char* steps = "config,iteration_s\n2x4,10\n1x4,15\n7,100\n";
  const ReplayResult r = run("1000,3,down,x\n3000,3,up,\n",
                             {PolicyKind::kElastic, PolicyKind::kAdaptive}, job_json(), steps);
  check_adaptive_took_only(r, "drop");
}

TEST_CASE("replay: nodes that fail at one instant are detected and recovered from once") {
  // Nodes 1 and 6 (stage 1 of pipeline 0, stage 2 of pipeline 1) fail together at 1,000 s: one
  // burst, so one detection of 15 s (not one per node) for every policy that detects failures,
  // and both count as failures. ReCycle then runs on 6 live nodes (14 s).
  const ReplayResult r = run("1000,1,down,x\n1000,6,down,x\n", recycle::sim::all_policies());
  check_identity(r);
  for (const PolicyResult& p : r.policies) {
    CAPTURE(recycle::sim::to_string(p.policy));
    CHECK(p.failures == 2);
    CHECK(lost(p, LostCause::kDetection) == doctest::Approx(15));
  }
}

TEST_CASE("replay: checkpoints every N iterations and after a restart (Varuna), by hand") {
  // Checkpoint-restart, a checkpoint every 10 iterations (100 s at 10 s) and one after the first
  // iteration that follows a restart; node 3 fails at 1,000 s and is back (joined) at 3,060 s.
  // Six cycles of 100 s + a 60 s write end at 960 s (60 iterations saved); 4 more by 1,000 s are
  // redone (40 s); detection 15 s, the wait to 3,060 s (2,045 s), the restart to 3,960 s. One
  // iteration, its write (3,970-4,030 s), then 37 cycles of 160 s to 9,950 s and 5 iterations:
  // 60 + 1 + 370 + 5 = 436 iterations and 44 writes.
  auto job = job_json();
  job["checkpoint"] = {
      {"interval_iterations", 10}, {"after_restart", true}, {"write_s", 60}, {"load_s", 300}};
  const PolicyResult p = run_one("1000,3,down,x\n3000,3,up,\n", PolicyKind::kCheckpoint, job);
  CHECK(p.samples == doctest::Approx(436 * 16));
  CHECK(lost(p, LostCause::kRedo) == doctest::Approx(40));
  CHECK(lost(p, LostCause::kCheckpoint) == doctest::Approx(44 * 60));
  job["checkpoint"]["interval_s"] = 600;
  CHECK_THROWS_WITH(recycle::profiles::job_from_json(job, "job.json"),
                    doctest::Contains("give interval_s or interval_iterations, not both"));
}

TEST_CASE("replay: a restart without rollback keeps what the survivors hold, by hand") {
  // Checkpoint-restart with restart.rollback false: at the failure at 1,000 s the 34 iterations
  // since the write at 600-660 s are kept (no redo). It waits to 3,060 s, restarts to 3,960 s,
  // and its next write falls 260 s of training later (340 s were trained since the last one):
  // 4,220 s, then every 660 s to 9,500 s: 9 writes; 6,040 - 540 = 5,500 s train 550 iterations.
  auto job = job_json();
  job["restart"]["rollback"] = false;
  const PolicyResult p = run_one("1000,3,down,x\n3000,3,up,\n", PolicyKind::kCheckpoint, job);
  CHECK(p.samples == doctest::Approx((94 + 550) * 16));
  CHECK(lost(p, LostCause::kRedo) == 0);
  CHECK(p.fallbacks == 1);
}

TEST_CASE("replay: nodes that join at the next failure (Oobleck's and Varuna's simulators)") {
  // Node 3 is back (joined) at 3,060 s and node 6 fails at 5,000 s. Joining at once, ReCycle runs
  // whole again from 3,060 s (10 s an iteration at 4,000 s); with restart.join "next_failure" the
  // node waits in the pool and ReCycle still runs on 7 live nodes (12 s) at 4,000 s.
  const std::string events = "1000,3,down,x\n3000,3,up,\n5000,6,down,x\n";
  const auto rate_at = [](const PolicyResult& p, double seconds) {
    double rate = 0;
    for (const auto& point : p.timeline) {
      if (recycle::to_seconds(point.time) <= seconds) rate = point.iterations_per_s;
    }
    return rate;
  };
  const PolicyResult now = run_one(events, PolicyKind::kRecycle);
  auto job = job_json();
  job["restart"]["join"] = "next_failure";
  const PolicyResult later = run_one(events, PolicyKind::kRecycle, job);
  CHECK(rate_at(now, 4000) == doctest::Approx(1.0 / 10));
  CHECK(rate_at(later, 4000) == doctest::Approx(1.0 / 12));
  // At 5,000 s the failure takes node 3 from the pool: 7 live nodes again.
  CHECK(rate_at(later, 6000) == doctest::Approx(1.0 / 12));
}

TEST_CASE("replay: a step-table row of none is a configuration that does not fit") {
  // One pipeline and 7 live nodes do not fit: elastic cannot shrink to one pipeline and waits for
  // the repair as checkpoint-restart does (610 iterations, by the hand count above); ReCycle
  // cannot run on 7 nodes, falls back to its checkpoint and waits too, then restarts.
  const char* steps = "config,iteration_s\n2x4,10\n1x4,none\n7,none\n";
  const ReplayResult r =
      run("1000,3,down,x\n3000,3,up,\n",
          {PolicyKind::kCheckpoint, PolicyKind::kElastic, PolicyKind::kRecycle}, job_json(), steps);
  check_identity(r);
  CHECK(r.policies[0].samples == doctest::Approx(610 * 16));
  CHECK(r.policies[1].samples == doctest::Approx(610 * 16));
  CHECK(r.policies[2].fallbacks == 1);
  CHECK(lost(r.policies[2], LostCause::kRepairWait) == doctest::Approx(2'045));
  const auto table = recycle::sim::StepTable::parse(steps, "steps.csv");
  REQUIRE(table.nodes(7).has_value());
  CHECK_FALSE(table.nodes(7)->period.has_value());
  CHECK_FALSE(table.nodes(6).has_value());
  CHECK_THROWS_WITH(recycle::sim::StepTable::parse("config,iteration_s\n2x4,never\n", "s.csv"),
                    doctest::Contains("iteration_s must be none or a number"));
}

TEST_CASE("replay: below its minimum of nodes the job stops until enough are back (Varuna)") {
  // cluster.min_nodes 8 on the 8-node job: node 3's failure at 1,000 s stops ReCycle as it stops
  // checkpoint-restart (detection, the 340 s since the checkpoint redone, the wait to 3,060 s, a
  // 900 s restart): the 610 iterations of checkpoint-restart's hand count.
  auto job = job_json();
  job["cluster"]["min_nodes"] = 8;
  const PolicyResult p = run_one("1000,3,down,x\n3000,3,up,\n", PolicyKind::kRecycle, job);
  CHECK(p.samples == doctest::Approx(610 * 16));
  CHECK(p.fallbacks == 1);
  CHECK(lost(p, LostCause::kRepairWait) == doctest::Approx(2'045));
  CHECK(lost(p, LostCause::kRestart) == doctest::Approx(900));
  job["cluster"]["min_nodes"] = 9;
  CHECK_THROWS_WITH(recycle::profiles::job_from_json(job, "job.json"),
                    doctest::Contains("min_nodes: 9 nodes is more than the cluster's 8"));
}

TEST_CASE("replay: a restart that costs by the live nodes (Varuna's table), by hand") {
  // Elastic with job_restart_s {"4": 100, "8": 600}: after node 3's failure it restarts on one
  // pipeline, 4 nodes: 100 + 300 s (load) to 1,415 s instead of 1,915 s; it trains to 3,060 s
  // with writes at 2,015 and 2,675 s: 1,525 s at 15 s = 101.667 iterations; the re-grow on 8
  // nodes then costs 60 + 600 + 300 s, as in the elastic case above, and 544 iterations follow.
  auto job = job_json();
  job["restart"]["job_restart_s"] = {{"4", 100}, {"8", 600}};
  const PolicyResult p = run_one("1000,3,down,x\n3000,3,up,\n", PolicyKind::kElastic, job);
  CHECK(p.samples == doctest::Approx((60 + 1525.0 / 15 + 544) * 16));
  CHECK(lost(p, LostCause::kRestart) == doctest::Approx(400));
  CHECK(lost(p, LostCause::kReconfiguration) == doctest::Approx(960));
  job["restart"]["job_restart_s"] = {{"0", 100}};
  CHECK_THROWS_WITH(recycle::profiles::job_from_json(job, "job.json"),
                    doctest::Contains("expected a node count from 1 to 16777216 as the key"));
}

TEST_CASE(
    "replay: a sharded optimizer loses a failed rank's shard: the in-place policies roll "
    "back, the restarting ones do not notice") {
  // As "one failure" above, with the optimizer state sharded over the two pipelines and no
  // replica: node 3's shard of stage 3's state is gone, so ReCycle, Oobleck, Bamboo and adaptive
  // all go back to the checkpoint written at 600-660 s (redo 340 s) and restart (600 + 300 s).
  auto job = job_json();
  job["optimizer"] = {{"distributed", true}};
  const std::string events = "1000,3,down,x\n3000,3,up,\n";
  for (const PolicyKind policy :
       {PolicyKind::kRecycle, PolicyKind::kOobleck, PolicyKind::kBamboo, PolicyKind::kAdaptive}) {
    CAPTURE(recycle::sim::to_string(policy));
    const PolicyResult p = run_one(events, policy, job);
    CHECK(p.fallbacks == 1);
    CHECK(lost(p, LostCause::kRedo) == doctest::Approx(340));
    CHECK(lost(p, LostCause::kRestart) == doctest::Approx(900));
  }
  // Checkpoint-restart and elastic restart from the checkpoint anyway: the same replay.
  for (const PolicyKind policy : {PolicyKind::kCheckpoint, PolicyKind::kElastic}) {
    CAPTURE(recycle::sim::to_string(policy));
    const PolicyResult sharded = run_one(events, policy, job);
    const PolicyResult whole = run_one(events, policy);
    CHECK(sharded.samples == whole.samples);
    CHECK(sharded.lost_s == whole.lost_s);
  }
}

TEST_CASE(
    "replay: with a replica of each shard on the next rank, a failure loses a shard only "
    "with its replica") {
  // PP 2 x DP 4 on 8 nodes: stage 1's ranks 0-3 are nodes 1, 3, 5 and 7, and rank r's shard has
  // its replica on rank r + 1 (rank 3's on rank 0).
  auto job = job_json();
  job["parallel"]["pp"] = 2;
  job["parallel"]["dp"] = 4;
  job["optimizer"] = {{"distributed", true}, {"lost_shard", "replica"}};
  const char* steps = "config,iteration_s\n4x2,10\n7,12\n6,14\n";
  const auto fallbacks = [&](const std::string& events) {
    return run_one(events, PolicyKind::kRecycle, job, steps).fallbacks;
  };
  CHECK(fallbacks("1000,1,down,x\n3000,1,up,\n") == 0);
  // That failure copies rank 0's shard from its replica to rank 2, a new replica, and the repaired
  // node copies its stage's state (weights, gradients, its shard and replica) back: latency +
  // bytes / (per-GPU bandwidth x efficiency) each.
  {
    const recycle::profiles::Job j = recycle::profiles::job_from_json(job, "job.json");
    const recycle::planner::JobModel model = recycle::planner::job_model(j);
    const double bandwidth = j.gpu.inter_node_bandwidth * j.gpu.efficiency.network;
    const double shard = static_cast<double>(model.model.optimizer_state_bytes[1]) / 2;
    const double copies = 2 * j.gpu.inter_node_latency + shard / bandwidth +
                          static_cast<double>(model.model.kept_bytes(1)) / bandwidth;
    const PolicyResult p = run_one("1000,1,down,x\n3000,1,up,\n", PolicyKind::kRecycle, job, steps);
    CHECK(lost(p, LostCause::kReconfiguration) == doctest::Approx(copies).epsilon(1e-6));
  }
  CHECK(fallbacks("1000,1,down,x\n1000,5,down,x\n") == 0);  // ranks 0 and 2
  CHECK(fallbacks("1000,1,down,x\n1000,3,down,x\n") == 1);  // rank 0 and its replica
  CHECK(fallbacks("1000,7,down,x\n1000,1,down,x\n") == 1);  // rank 3 and its replica
  // One after the other: the replica of rank 0's shard is made again on rank 2, so losing rank 1
  // later loses nothing.
  CHECK(fallbacks("1000,1,down,x\n2000,3,down,x\n") == 0);
  // Without the distributed optimizer no burst that leaves every stage live loses state.
  job.erase("optimizer");
  CHECK(fallbacks("1000,1,down,x\n1000,3,down,x\n") == 0);
}
