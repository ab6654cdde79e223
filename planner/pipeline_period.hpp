// The period a job's schedule runs at with every worker up, timed on one pipeline that stands for
// `ring` pipelines (its all-reduce rings hold the others, Cluster::set_absent_ring_peers) wherever
// relabelling pipelines changes no cost: the figure `recycle simulate --job` prints, and the one
// the job replay (sim/replay/replay_rates.hpp) and the configuration search (planner/configure.hpp)
// charge. One definition, so the three agree to the nanosecond (tests/cli/configure.cmake).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/units.hpp"
#include "planner/language/schedule.hpp"
#include "planner/timing/cost_model.hpp"

namespace recycle::planner {

struct PipelinePeriod {
  Nanos period = 0;
  /// The most bytes a worker holds (planner/timing/memory.hpp peak_memory): its state and its
  /// activations at their peak.
  Bytes peak_bytes = 0;
};

/// Schedule `name` (a generator, or "recycle" with no failures) on `job`'s layout re-cut to
/// `stages` stages and `microbatches` micro-batches a pipeline (a count the schedule does not take
/// is charged as the next it does, planner::runnable_microbatches), on one pipeline standing for
/// `ring`, with `base`'s costs; its steady state as the simulator walks it or, with `estimate`,
/// the planners' fast estimate on the direct network. nullopt when it deadlocks. InputError naming
/// `source` when the workers run out of memory or the schedule does not take the layout.
[[nodiscard]] std::optional<PipelinePeriod> pipeline_period(
    const CostModel& base, const Layout& job, const std::string& name, const std::string& source,
    std::int32_t stages, std::int32_t microbatches, std::int32_t ring, bool estimate = false);

}  // namespace recycle::planner
