// A job file (profiles/job.hpp) as the planners, the simulator and the replay see it: the layout
// its schedule runs on, the profile synthesized for that layout's placement, and the cost model
// built from them. `job_model` is the one place a job becomes a model; every command that takes
// --job (plan, simulate, degradation, plan-table, profile synth|show, replay, study) calls it, so
// a job gives the same numbers whichever command times it and whether its schedule comes from the
// file or from the command line.
#pragma once

#include <string_view>

#include "core/error.hpp"
#include "planner/language/schedule.hpp"
#include "planner/timing/cost_model.hpp"
#include "profiles/job.hpp"

namespace recycle::planner {

struct JobModel {
  profiles::Job job;  ///< as read, `schedule` the one the model is for
  /// The profile, its chunks on the stages the layout places them (a V-shaped schedule runs
  /// its last chunk, with the output layer, on stage 0 beside the embedding).
  profiles::Synthesis synthesis;
  /// The job's parallel block as its schedule runs it (generators.hpp layout_for: zb-v and
  /// dualpipe-v place two chunks a worker in a V); micro-batches per pipeline = global_batch /
  /// (dp x microbatch_size).
  Layout layout;
  CostModel model;
};

/// The job's model for `schedule`, which replaces the job's own (a command line's --schedule);
/// empty: the job's own. InputError naming the job file and the field when the job cannot be
/// synthesized or its layout is outside the planners' ranges (schedule.hpp: kMaxDp, kMaxPp,
/// kMaxMicrobatches, kMaxInterleave).
[[nodiscard]] JobModel job_model(profiles::Job job, std::string_view schedule = {});

/// What every command that reads a job file checks of it, with the schedule the command runs
/// (`m` = job_model(job, schedule); "recycle" as its base, 1f1b): the schedule runs on the layout
/// (generators.hpp require_runs), and each stage's state and one micro-batch fit a worker
/// (timing/memory.hpp memory_limits, two weight versions for 2bw). InputError naming the flag
/// the field stands for (as_job_field), or the file.
void require_runnable(const JobModel& m);

/// `e`, raised for the layout of job file `source`, as that file's field when it names
/// --interleave ("job.json: parallel.interleave 2: ..."); else `e` as it is.
[[nodiscard]] InputError as_job_field(const InputError& e, const std::string& source,
                                      const Layout& layout);

/// The job's parallel block as a layout, before its schedule places it; InputError as job_model
/// for values outside the planners' ranges.
[[nodiscard]] Layout job_layout(const profiles::Job& job);

/// The job's model on a layout given whole, from `source` (a schedule file): its interleave and
/// placement say where the chunks go; InputError naming `source` when its pipelines, stages or
/// micro-batches are not the job's.
[[nodiscard]] JobModel job_model(profiles::Job job, const Layout& placed,
                                 const std::string& source);

}  // namespace recycle::planner
