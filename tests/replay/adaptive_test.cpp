// The adaptive policy (sim/replay/replay_policies.cpp): on every shipped trace and job it trains
// at least as much as the best fixed policy, less what its own switching cost it (its stalls to
// reconfigure and restart, and the work it threw away): it takes, at each event, the action with
// the smallest expected loss under the rates the fixed policies use, so it can lose to one of them
// only by switching when that one did not.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "planner/job_model.hpp"
#include "profiles/job.hpp"
#include "sim/replay/replay.hpp"
#include "traces/import.hpp"
#include "traces/mapping.hpp"

namespace {

using recycle::sim::LostCause;
using recycle::sim::PolicyKind;
using recycle::sim::PolicyResult;

double lost(const PolicyResult& p, LostCause c) {
  return p.lost_s[static_cast<std::size_t>(c)];
}

void check_adaptive(const std::string& job_path, const std::string& trace_path,
                    const std::string& schedule, double days) {
  CAPTURE(job_path);
  CAPTURE(trace_path);
  CAPTURE(schedule);
  const auto job = recycle::profiles::load_job(job_path);
  const auto model = recycle::planner::job_model(job, schedule);
  const auto loaded =
      recycle::traces::import_trace(recycle::traces::ImportFormat::kNative, trace_path, {});
  const auto trace = recycle::traces::map_trace(
      loaded.trace, {recycle::traces::MapMode::kScale, job.resilience.cluster.nodes, 1});
  recycle::sim::ReplayOptions options;
  options.policies = recycle::sim::all_policies();
  if (days > 0) options.duration = static_cast<recycle::Nanos>(days * 86'400 * 1e9);
  const auto r = recycle::sim::replay(model, trace, options);
  const PolicyResult* adaptive = nullptr;
  double best = 0;
  for (const PolicyResult& p : r.policies) {
    if (p.policy == PolicyKind::kAdaptive) {
      adaptive = &p;
    } else if (p.unfit.empty()) {
      best = std::max(best, p.goodput);
    }
  }
  REQUIRE(adaptive != nullptr);
  const double switching = lost(*adaptive, LostCause::kReconfiguration) +
                           lost(*adaptive, LostCause::kRestart) + lost(*adaptive, LostCause::kRedo);
  CHECK(adaptive->goodput + switching / recycle::to_seconds(r.duration) >= best);
}

}  // namespace

TEST_CASE("adaptive: never worse than the best fixed policy by more than its switching costs") {
  const std::filesystem::path root(RECYCLE_SOURCE_DIR);
  int pairs = 0;
  for (const auto& job : std::filesystem::directory_iterator(root / "profiles/jobs")) {
    for (const auto& trace : std::filesystem::directory_iterator(root / "traces/data")) {
      if (trace.path().extension() != ".csv") continue;
      // Each whole trace on the job's own schedule, and the first 60 days on zb-h2, where
      // re-instantiating pipelines beats re-routing more often.
      check_adaptive(job.path().string(), trace.path().string(), "", 0);
      check_adaptive(job.path().string(), trace.path().string(), "zb-h2", 60);
      ++pairs;
    }
  }
  CHECK(pairs >= 3);  // the shipped jobs and traces were found
}
