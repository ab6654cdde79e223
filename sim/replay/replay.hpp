// Job replay: a training job moved through a failure trace under resilience policies
// (`recycle replay`, docs/policies.md). The trace's nodes are the cluster's (slot n of the job is
// node n at the start, the nodes past the job's are spares); failures and repairs come from it,
// detection, restarts, checkpoints and rejoins from the job's resilience blocks, and between
// events the job trains at the steady-state rate of its configuration
// (sim/replay/replay_rates.hpp). Deterministic: the same job, trace and options give the same
// result, byte for byte.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "planner/job_model.hpp"
#include "profiles/job.hpp"
#include "sim/replay/replay_clock.hpp"
#include "sim/replay/replay_policies.hpp"
#include "sim/replay/step_table.hpp"
#include "traces/trace.hpp"

namespace recycle::sim {

class SharedPlans;

struct PolicyResult {
  PolicyKind policy = PolicyKind::kRecycle;
  double samples = 0;          ///< samples trained and kept
  double goodput = 0;          ///< samples over the fault-free job's in the same time
  double ettr = 0;             ///< running time whose work was kept, over the replay's length
  double mean_throughput = 0;  ///< samples / s over the replay
  std::array<double, kLostCauses> lost_s{};  ///< fault-free-equivalent seconds lost, per cause
  double gpu_hours = 0;             ///< the cluster's GPUs (spares included) x the replay's length
  std::int64_t failures = 0;        ///< failures of nodes that held a job slot
  std::int64_t fallbacks = 0;       ///< restarts from a checkpoint
  std::vector<RatePoint> timeline;  ///< iterations / s over time
  /// How often the policy took each of its actions (adaptive), else empty.
  std::vector<std::pair<std::string, std::int64_t>> actions;
  /// Why the policy could not run at all (Bamboo's replicas exceed the memory), else empty.
  std::string unfit;
};

struct ReplayResult {
  Nanos duration = 0;
  double samples_per_iteration = 0;  ///< the global batch
  Nanos fault_free_iteration = 0;
  /// The baseline: the job's schedule, which every policy runs with every worker up.
  std::string schedule;
  /// ReCycle's adaptive plan that outran the baseline, if one did (ReplayRates::outrun).
  std::optional<AdaptiveOutrun> outrun;
  Seconds checkpoint_interval_s = 0;  ///< the job file's, or worked out for "auto"
  /// What the policies are charged and where each figure comes from, one line each.
  std::vector<std::string> charges;
  std::int64_t cluster_nodes = 0;
  std::int64_t gpus = 0;            ///< the cluster's, spares included
  std::int64_t configurations = 0;  ///< distinct configurations timed (cache entries)
  std::int64_t from_table = 0;      ///< of which a step table gave
  std::vector<PolicyResult> policies;
};

struct ReplayOptions {
  std::vector<PolicyKind> policies;
  Nanos duration = -1;  ///< replay [0, duration]; -1: the whole trace
  const StepTable* table = nullptr;
  /// Called with the fraction done (0..1) as the replay goes; may be empty.
  std::function<void(double)> progress;
  /// Plans shared with other replays of the same job model (sim/replay/shared_plans.hpp); only
  /// replays whose jobs give the same planner::JobModel may share one. nullptr: the replay's own.
  SharedPlans* shared_plans = nullptr;
};

/// Replays `trace` (numbered nodes, at most the cluster's; InputError naming `--trace`
/// otherwise). InputError naming the job file for configurations a policy cannot time.
[[nodiscard]] ReplayResult replay(const planner::JobModel& model, const traces::Trace& trace,
                                  const ReplayOptions& options);

}  // namespace recycle::sim
