#include "planner/job_model.hpp"

#include <string>
#include <vector>

#include "core/error.hpp"
#include "planner/generators.hpp"
#include "planner/language/work_limits.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/memory.hpp"

namespace recycle::planner {

namespace {

std::int32_t in_range(std::int64_t value, std::int64_t max, const std::string& field,
                      const char* what) {
  if (value > max) {
    throw InputError(field, std::string("gives ") + std::to_string(value) + " " + what +
                                ", more than the planners take (" + std::to_string(max) + ")");
  }
  return static_cast<std::int32_t>(value);
}

}  // namespace

Layout job_layout(const profiles::Job& job) {
  const profiles::ParallelConfig& p = job.parallel;
  const std::string at = job.source + ": parallel.";
  Layout given;
  given.dp = in_range(p.dp, kMaxDp, at + "dp", "pipelines");
  given.pp = in_range(p.pp, kMaxPp, at + "pp", "stages");
  given.interleave = in_range(p.interleave, kMaxInterleave, at + "interleave", "chunks");
  given.microbatches = in_range(p.microbatches(), kMaxMicrobatches, at + "global_batch",
                                "micro-batches per pipeline");
  return given;
}

namespace {

/// The one synthesis: the job's model and hardware, its chunks where `layout` places them.
JobModel model_on(profiles::Job job, const Layout& layout) {
  JobModel out;
  out.layout = layout;
  require_chunks(out.layout, job.source + ": parallel");
  profiles::ParallelConfig placed = job.parallel;
  placed.interleave = layout.interleave;
  if (layout.placement == Placement::kLoop) {
    out.synthesis = profiles::synthesize(job.model, job.gpu, placed, job.source);
  } else {
    std::vector<std::int32_t> stage_of;
    for (std::int32_t v = 0; v < layout.virtual_stages(); ++v)
      stage_of.push_back(layout.stage_of(v));
    out.synthesis = profiles::synthesize(job.model, job.gpu, placed, job.source, stage_of);
  }
  out.model = CostModel::from_profile(out.synthesis.profile, out.layout, job.source);
  out.job = std::move(job);
  return out;
}

}  // namespace

JobModel job_model(profiles::Job job, std::string_view schedule) {
  if (!schedule.empty()) job.schedule = std::string(schedule);
  const Layout layout = layout_for(job.schedule, job_layout(job));
  return model_on(std::move(job), layout);
}

void require_runnable(const JobModel& m) {
  const std::string& name = m.job.schedule;
  const std::string runs = name == "recycle" ? recycle_base_for(name) : name;
  try {
    require_runs(runs, m.layout);
  } catch (const InputError& e) {
    throw as_job_field(e, m.job.source, m.layout);
  }
  const std::int32_t versions = canonical_schedule_name(runs) == "2bw" ? 2 : 1;
  (void)memory_limits(m.model, m.layout, m.job.source, versions);
}

InputError as_job_field(const InputError& e, const std::string& source, const Layout& layout) {
  if (source.empty() || e.where() != "--interleave") return e;
  return InputError(
      source, "parallel.interleave " + std::to_string(layout.interleave) + ": " + e.problem());
}

JobModel job_model(profiles::Job job, const Layout& placed, const std::string& source) {
  const Layout given = job_layout(job);
  if (placed.dp != given.dp || placed.pp != given.pp || placed.microbatches != given.microbatches) {
    throw InputError(
        source, "its layout (dp " + std::to_string(placed.dp) + " x pp " +
                    std::to_string(placed.pp) + ", " + std::to_string(placed.microbatches) +
                    " micro-batches) is not the job's (dp " + std::to_string(given.dp) + " x pp " +
                    std::to_string(given.pp) + ", " + std::to_string(given.microbatches) +
                    " micro-batches, from " + job.source + ")");
  }
  return model_on(std::move(job), placed);
}

}  // namespace recycle::planner
