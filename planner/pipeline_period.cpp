#include "planner/pipeline_period.hpp"

#include <algorithm>

#include "planner/generators.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/memory.hpp"
#include "planner/timing/period.hpp"

namespace recycle::planner {

namespace {

/// Schedule `name` on `layout`, compute only.
Schedule job_schedule(const std::string& name, const Layout& layout, const CostModel& model) {
  if (name == "recycle") {
    RecycleOptions options;
    options.layout = layout;
    options.model = model;
    return plan_recycle(options).schedule;
  }
  GeneratorOptions options;
  options.layout = layout;
  options.model = model;
  return generate_fault_free(name, options);
}

}  // namespace

std::optional<PipelinePeriod> pipeline_period(const CostModel& base, const Layout& job,
                                              const std::string& name, const std::string& source,
                                              std::int32_t stages, std::int32_t microbatches,
                                              std::int32_t ring, bool estimate) {
  const bool whole_nodes = base.cluster.pipelines_interchangeable();
  CostModel model = base;
  // The schedule, its chunks placed as the job places them, on pipelines of any depth (Oobleck's
  // templates, Bamboo's take-overs): `base` is a model of that placement.
  Layout layout = job;
  layout.dp = whole_nodes ? 1 : ring;
  layout.pp = stages;
  layout.microbatches = runnable_microbatches(name, layout, microbatches);
  if (whole_nodes) model.cluster.set_absent_ring_peers(ring - 1);
  const Schedule schedule = job_schedule(name, layout, model);
  check_memory(schedule, model, source);
  const auto state =
      estimate ? direct_steady_state(schedule, model) : steady_state(schedule, model);
  if (!state) return std::nullopt;
  PipelinePeriod out;
  out.period = state->period;
  const std::vector<Bytes> peaks = peak_memory(schedule, model);
  if (!peaks.empty()) out.peak_bytes = *std::max_element(peaks.begin(), peaks.end());
  return out;
}

}  // namespace recycle::planner
