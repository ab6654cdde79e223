#include "planner/job_model.hpp"

#include "core/error.hpp"
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

JobModel job_model(const profiles::Job& job) {
  const profiles::ParallelConfig& p = job.parallel;
  JobModel out;
  out.synthesis = job.synthesize();
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
