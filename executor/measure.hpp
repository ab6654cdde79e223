// Timing the workload's operations on this machine: what the simulator is given to predict a run.
#pragma once

#include <cstdint>

#include "core/units.hpp"
#include "executor/stage_math.hpp"
#include "planner/costs.hpp"

namespace recycle::executor {

struct MeasuredStage {
  planner::StageCost cost;  ///< F, I, W of one micro-batch
  Nanos optimizer = 0;      ///< one optimizer step of the stage
};

/// Times F, I, W and the optimizer step of one stage of `shape` on the calling thread with one
/// BLAS thread: the median of `repetitions` runs after one warm-up run.
[[nodiscard]] MeasuredStage measure_stage(const StageShape& shape, std::int32_t repetitions);

}  // namespace recycle::executor
