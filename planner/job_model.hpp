// A job file (profiles/job.hpp) as the planners and the simulator see it: its synthesized
// profile, the layout (micro-batches per pipeline = global_batch / (dp x microbatch_size)) and
// the cost model built from them.
#pragma once

#include "planner/cost_model.hpp"
#include "planner/schedule.hpp"
#include "profiles/job.hpp"

namespace recycle::planner {

struct JobModel {
  profiles::Synthesis synthesis;
  Layout layout;
  CostModel model;
};

/// The job's profile, its chunks placed as its schedule places them (generators.hpp layout_for: a
/// V-shaped schedule runs two chunks a worker, the last on stage 0); InputError as
/// profiles::synthesize.
[[nodiscard]] profiles::Synthesis synthesize_job(const profiles::Job& job);

/// InputError naming the job file and the field when the job cannot be synthesized or its layout
/// is outside the planners' ranges (schedule.hpp: kMaxDp, kMaxPp, kMaxMicrobatches,
/// kMaxInterleave).
[[nodiscard]] JobModel job_model(const profiles::Job& job);

}  // namespace recycle::planner
