// How Oobleck splits the global batch over heterogeneous pipelines (Jang et al., SOSP '23; its
// planner's batch distribution, SymbioticLab/Oobleck `PipelineInstantiator`): a pipeline's time is
// taken as linear in the micro-batches it carries, at its template's time per micro-batch, and the
// micro-batches are split so that the slowest pipeline is as fast as it can be (min-max), every
// micro-batch of the batch placed. Oobleck gives every pipeline of a template the same count; where
// equal counts cannot add up to the batch, pipelines of one template here differ by one.
#pragma once

#include <cstdint>
#include <vector>

#include "core/units.hpp"

namespace recycle::sim {

/// Pipelines instantiated from one template.
struct TemplateShare {
  std::int64_t pipelines = 0;  ///< how many
  /// Time per micro-batch as a ratio: `time` for `microbatches` micro-batches (both > 0).
  Nanos time = 0;
  std::int64_t microbatches = 0;
};

/// For each template (in the order given), the most micro-batches any of its pipelines carries
/// when `batch` micro-batches are split min-max (0: its pipelines carry none). Among splits with
/// the same slowest time, the excess over the batch is taken from the templates given first.
[[nodiscard]] std::vector<std::int64_t> split_batch(const std::vector<TemplateShare>& templates,
                                                    std::int64_t batch);

}  // namespace recycle::sim
