#include "sim/replay/spares.hpp"

#include <limits>

#include "core/error.hpp"

namespace recycle::sim {

namespace {

double per_sample(const PolicyResult& p) {
  return p.samples > 0 ? p.gpu_hours / p.samples : std::numeric_limits<double>::infinity();
}

}  // namespace

SparesMatch match_spares(const planner::JobModel& model,
                         const std::function<traces::Trace(std::int64_t)>& trace_for,
                         const ReplayOptions& options, const PolicyResult& recycle,
                         std::int64_t most) {
  RECYCLE_ASSERT(recycle.policy == PolicyKind::kRecycle && recycle.unfit.empty(),
                 "ReCycle's own result to match");
  SparesMatch out;
  out.target = recycle.goodput;
  out.recycle_gpu_hours = per_sample(recycle);
  out.job_spares = model.job.resilience.cluster.spares;
  ReplayOptions one = options;
  one.policies = {PolicyKind::kCheckpoint};
  one.progress = nullptr;
  for (std::int64_t extra = 1; extra <= most; ++extra) {
    planner::JobModel larger = model;
    larger.job.resilience.cluster.nodes += extra;
    larger.job.resilience.cluster.spares += extra;
    const ReplayResult r = replay(larger, trace_for(larger.job.resilience.cluster.nodes), one);
    const PolicyResult& c = r.policies.front();
    out.tried = extra;
    if (out.extra == 0 || c.goodput > out.checkpoint.goodput) {
      out.extra = extra;
      out.checkpoint = c;
      out.checkpoint_gpu_hours = per_sample(c);
    }
    if (c.goodput >= out.target) {
      out.matched = true;
      break;
    }
    // No time left waiting for a repair: more spares cannot help it (what it loses now is its
    // rollbacks, restarts and writes).
    if (c.lost_s[static_cast<std::size_t>(LostCause::kRepairWait)] == 0) {
      out.saturated = extra;
      break;
    }
  }
  return out;
}

}  // namespace recycle::sim
