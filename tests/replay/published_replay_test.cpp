// The baselines are not strawmen: replaying Oobleck's own evaluation setting reproduces its
// simulator's throughput. Setting (Oobleck, Jang et al., SOSP '23; artifact branch sosp23-artifact,
// tools/simulator): GPT-3 6.7B on 30 single-GPU nodes, 1,024 samples per iteration, one node lost
// every 6 h / 3 h / 1 h / 30 min / 10 min (its traces, in ../shared/traces-raw), a 10 s
// reconfiguration per failure and the step times of its throughput table
// (tests/sim/data/oobleck_gpt3_6.7b_steps.csv). Its simulator gives 4.329, 4.308, 4.223, 4.112 and
// 3.546 samples/s (the last against Varuna's 0.255 is the paper's "up to 13.9x"). It measures from
// its first step (after a 45 s start and the restart) to its last; the replay over the whole
// trace, so the two differ by that start and by the step in flight at each failure (Oobleck keeps
// it when it ends within the restart, the replay redoes it): 2 % bounds both.
#include <doctest/doctest.h>

#include <string>

#include "planner/job_model.hpp"
#include "profiles/job.hpp"
#include "sim/replay/replay.hpp"
#include "sim/replay/step_table.hpp"
#include "tests/traces/test_paths.hpp"
#include "traces/import.hpp"
#include "traces/mapping.hpp"

namespace {

/// Replays a Bamboo-format trace under one policy with the job file and step table of a published
/// setting (tests/sim/data/<setting>_job.json and <setting>_steps.csv).
recycle::sim::PolicyResult replay_published(const std::string& setting, const std::string& trace,
                                            recycle::sim::PolicyKind policy) {
  const std::string data = std::string(RECYCLE_SOURCE_DIR) + "/tests/sim/data/" + setting;
  const recycle::profiles::Job job = recycle::profiles::load_job(data + "_job.json");
  const recycle::planner::JobModel model = recycle::planner::job_model(job);
  const auto table = recycle::sim::StepTable::load(data + "_steps.csv");
  const auto loaded =
      recycle::traces::import_trace(recycle::traces::ImportFormat::kBamboo, trace, {});
  recycle::sim::ReplayOptions options;
  options.policies = {policy};
  options.table = &table;
  return recycle::sim::replay(model, loaded.trace, options).policies.front();
}

}  // namespace

TEST_CASE("replay: Oobleck's GPT-3 6.7B throughput under failures, as its simulator gives it") {
  struct Row {
    const char* trace;
    double samples_per_s;
  };
  for (const Row row : {Row{"6h.csv", 4.329}, Row{"3h.csv", 4.308}, Row{"1h.csv", 4.223},
                        Row{"30m.csv", 4.112}, Row{"10m.csv", 3.546}}) {
    const std::string file = std::string("oobleck-sim-traces/") + row.trace;
    const auto path = recycle::traces::testing::shared_trace(file);
    if (!path) return recycle::traces::testing::skip_without_trace(file);
    const recycle::sim::PolicyResult result =
        replay_published("oobleck_gpt3_6.7b", *path, recycle::sim::PolicyKind::kOobleck);
    CAPTURE(row.trace);
    CHECK(result.mean_throughput == doctest::Approx(row.samples_per_s).epsilon(0.02));
    CHECK(result.fallbacks == 0);
  }
}

// Bamboo (Thorpe et al., NSDI '23): its simulator (github.com/uclasystem/bamboo, commit 8080929,
// project_pactum/simulation/simulator.py, model GPT-2) on its p3 spot trace: 12-stage pipelines,
// as many as the live nodes make (at most 2 of its 32 nodes), the step times of
// tests/sim/data/bamboo_gpt2_p3_steps.csv, a 45 s node start, a 20 s local and 30 s global
// rendezvous, no rollback (here: a checkpoint every second at no cost). As published it gives
// 23.684 samples/s; that includes a rule the replay does not follow: the preemption of a node in
// no pipeline (waiting or still starting: 40 of the trace's 167) slows the running job 1.5x until
// its next reconfiguration, as if the node had been covered. With that preemption leaving the job
// alone (the removal handled as for a node not running: no fallback, the waiting count lowered)
// the same simulator gives 25.866 samples/s. It measures from its first step (75 s in) to its last;
// the replay over the whole trace and re-forms at once where the simulator first runs a step at
// 1.5x: 1 % bounds both.
TEST_CASE("replay: Bamboo's GPT-2 throughput on its p3 spot trace, as its simulator gives it") {
  const auto path = recycle::traces::testing::shared_trace("bamboo-spot/p3-trace.csv");
  if (!path) return recycle::traces::testing::skip_without_trace("bamboo-spot/p3-trace.csv");
  const recycle::sim::PolicyResult result =
      replay_published("bamboo_gpt2_p3", *path, recycle::sim::PolicyKind::kBamboo);
  CHECK(result.mean_throughput == doctest::Approx(25.866).epsilon(0.01));
}

TEST_CASE("replay: the InfiniteHBD trace (348 days, 231 nodes) under every policy") {
  const auto path = recycle::traces::testing::shared_trace("infinitehbd-stepfun/fault_trace.json");
  if (!path) {
    return recycle::traces::testing::skip_without_trace("infinitehbd-stepfun/fault_trace.json");
  }
  const recycle::profiles::Job job = recycle::profiles::load_job(
      std::string(RECYCLE_SOURCE_DIR) + "/profiles/jobs/gpt3-175b-a100-1024.json");
  const recycle::planner::JobModel model = recycle::planner::job_model(job);
  const auto loaded =
      recycle::traces::import_trace(recycle::traces::ImportFormat::kInfiniteHbd, *path, {});
  // Its 231 nodes' failure rate (7.2 per 1,000 node-days) on the job's 128 nodes.
  const recycle::traces::Trace trace = recycle::traces::map_trace(
      loaded.trace, {recycle::traces::MapMode::kScale, job.resilience.cluster.nodes, 1});
  recycle::sim::ReplayOptions options;
  options.policies = recycle::sim::all_policies();
  const auto result = recycle::sim::replay(model, trace, options);
  const double t0 = recycle::to_seconds(result.fault_free_iteration);
  for (const auto& p : result.policies) {
    CAPTURE(recycle::sim::to_string(p.policy));
    CHECK(p.failures > 100);
    CHECK(p.goodput > 0);
    CHECK(p.goodput < 1);
    double lost = 0;
    for (const double s : p.lost_s) lost += s;
    CHECK(p.samples / result.samples_per_iteration * t0 + lost ==
          doctest::Approx(recycle::to_seconds(result.duration)).epsilon(1e-9));
  }
}
