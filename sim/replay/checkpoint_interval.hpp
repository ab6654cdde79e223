// The checkpoint interval a job replay uses: the job file's `checkpoint.interval_s`, or with
// `"interval_s": "auto"` the optimum for the job's failure rate on the replayed trace. The optimum
// is Daly's higher-order estimate (J. T. Daly, "A higher order estimate of the optimum checkpoint
// interval for restart dumps", FGCS 22(3), 2006), which refines Young's sqrt(2 x write x MTBF)
// (J. W. Young, CACM 17(9), 1974): the interval that loses the least to checkpoint writes and
// rework when every failure rolls back to the last checkpoint. For the policies where most
// failures do not roll back (recycle, oobleck, bamboo) it is the same interval, which spends more
// on writes than they need; a study sweep over `checkpoint.interval_s` finds each one's own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/units.hpp"
#include "profiles/job.hpp"
#include "traces/trace.hpp"

namespace recycle::sim {

/// Daly's optimum interval of training between checkpoints for a write of `write_s` and a mean
/// time between failures `mtbf_s` (both > 0): sqrt(2 d M) (1 + sqrt(d / 2M) / 3 + d / 18M) - d
/// for d < 2M, else M.
[[nodiscard]] double daly_interval(double write_s, double mtbf_s);

/// The job's mean time between failures on the first `end` of `trace`: the trace's failure rate
/// per node (down events after time 0, over all its nodes and the time) times the job's nodes;
/// nullopt when the trace has no failure.
[[nodiscard]] std::optional<double> job_mtbf_s(const profiles::Job& job, const traces::Trace& trace,
                                               Nanos end);

struct CheckpointInterval {
  Seconds seconds = 0;
  std::string source;  ///< "the job file", or how "auto" was worked out
};

/// The interval for `job` replayed over the first `end` of `trace` (with interval_iterations, that
/// many fault-free iterations of `iteration_s`: the clock counts the iterations themselves).
/// "auto": Daly's optimum for
/// job_mtbf_s; no failure, or a free write, gives no optimum, and the interval is then one
/// checkpoint a day. Never below the fault-free iteration
/// `iteration_s`: a checkpoint is taken between iterations.
[[nodiscard]] CheckpointInterval checkpoint_interval(const profiles::Job& job,
                                                     const traces::Trace& trace, Nanos end,
                                                     Seconds iteration_s);

}  // namespace recycle::sim
