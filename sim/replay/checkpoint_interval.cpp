#include "sim/replay/checkpoint_interval.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace recycle::sim {

double daly_interval(double write_s, double mtbf_s) {
  RECYCLE_ASSERT(write_s > 0 && mtbf_s > 0, "a write and a failure rate");
  if (write_s >= 2 * mtbf_s) return mtbf_s;
  const double ratio = write_s / (2 * mtbf_s);
  return std::sqrt(2 * write_s * mtbf_s) * (1 + std::sqrt(ratio) / 3 + ratio / 9) - write_s;
}

std::optional<double> job_mtbf_s(const profiles::Job& job, const traces::Trace& trace, Nanos end) {
  std::int64_t downs = 0;
  for (const traces::Event& e : trace.events()) {
    if (e.time > end) break;
    if (e.time > 0 && e.kind == traces::EventKind::kDown) ++downs;
  }
  const double node_seconds = static_cast<double>(trace.node_count()) * to_seconds(end);
  if (downs == 0 || node_seconds <= 0) return std::nullopt;
  const double per_node = static_cast<double>(downs) / node_seconds;
  return 1 / (per_node * static_cast<double>(job.resilience.job_nodes));
}

CheckpointInterval checkpoint_interval(const profiles::Job& job, const traces::Trace& trace,
                                       Nanos end, Seconds iteration_s) {
  const profiles::CheckpointBlock& c = job.resilience.checkpoint;
  if (c.interval_iterations > 0) {
    return {static_cast<double>(c.interval_iterations) * iteration_s,
            fmt::format("the job file's interval_iterations: every {} iterations, at the "
                        "fault-free rate",
                        c.interval_iterations)};
  }
  if (!c.interval_auto) return {c.interval_s, "the job file"};
  constexpr double kDay = 86'400;
  const std::optional<double> mtbf_s = job_mtbf_s(job, trace, end);
  if (!mtbf_s || c.write_s == 0) {
    return {std::max(kDay, iteration_s), !mtbf_s ? "auto: no failure in the trace, one a day"
                                                 : "auto: free writes give no optimum, one a day"};
  }
  const double mtbf = *mtbf_s;
  const double interval = std::max(daly_interval(c.write_s, mtbf), iteration_s);
  return {interval, fmt::format("auto: Daly's optimum for a {:g} s write and a failure of the "
                                "job's {} nodes every {:.3g} h on this trace",
                                c.write_s, job.resilience.job_nodes, mtbf / 3600)};
}

}  // namespace recycle::sim
