// The sequential trainer a pipelined run must train the same weights as: every micro-batch of
// every pipeline through every stage in turn, no pipeline and no threads, gradients summed and SGD
// on their mean over the global batch (executor/stage_math.hpp). With two weight versions it
// applies PipeDream-2BW's update (Narayanan et al., ICML '21, §3.1): iteration t computes its
// gradients on the weights of version max(t - 1, 0) and steps version t with them,
// W(t+1) = W(t) - lr grad f(W(t-1)). `validate --check-equivalence` and the executor's tests
// compare against it.
#pragma once

#include <cstdint>
#include <vector>

#include "executor/runtime.hpp"
#include "planner/language/schedule.hpp"

namespace recycle::executor {

/// Per virtual stage (each a stage of the workload, whichever worker runs it): its parameters
/// after config.iterations iterations of `layout`'s global batch, under `weight_versions` (1:
/// synchronous SGD; 2: PipeDream-2BW's rule).
[[nodiscard]] std::vector<std::vector<float>> train_sequentially(const planner::Layout& layout,
                                                                 const RunConfig& config,
                                                                 std::int32_t weight_versions = 1);

/// The largest |a_i - b_i| / max(|b_i|, 1e-3): how far weights `a` are from the reference `b`.
[[nodiscard]] double max_relative_difference(const std::vector<float>& a,
                                             const std::vector<float>& b);

}  // namespace recycle::executor
