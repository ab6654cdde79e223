#include "planner/job_model.hpp"

#include <vector>

#include "core/error.hpp"
#include "planner/generators.hpp"
#include "planner/work_limits.hpp"

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

profiles::Synthesis synthesize_job(const profiles::Job& job) {
  profiles::ParallelConfig p = job.parallel;
  Layout chunks;
  chunks.pp = p.pp;
  chunks.interleave = p.interleave;
  chunks = layout_for(job.schedule, chunks);
  if (chunks.placement == Placement::kLoop)
    return profiles::synthesize(job.model, job.gpu, p, job.source);
  p.interleave = chunks.interleave;
  std::vector<std::int32_t> stage_of;
  for (std::int32_t v = 0; v < chunks.virtual_stages(); ++v) stage_of.push_back(chunks.stage_of(v));
  return profiles::synthesize(job.model, job.gpu, p, job.source, stage_of);
}

JobModel job_model(const profiles::Job& job) {
  const profiles::ParallelConfig& p = job.parallel;
  JobModel out;
  out.synthesis = synthesize_job(job);
  const std::string at = job.source + ": parallel.";
  out.layout.dp = in_range(p.dp, kMaxDp, at + "dp", "pipelines");
  out.layout.pp = in_range(p.pp, kMaxPp, at + "pp", "stages");
  out.layout.interleave = in_range(p.interleave, kMaxInterleave, at + "interleave", "chunks");
  out.layout.microbatches = in_range(p.microbatches(), kMaxMicrobatches, at + "global_batch",
                                     "micro-batches per pipeline");
  require_chunks(out.layout, job.source + ": parallel");
  out.model = CostModel::from_profile(out.synthesis.profile, out.layout, job.source);
  return out;
}

}  // namespace recycle::planner
