// The flags that shape the executor's workload (--width, --layers-per-stage, --microbatch-size,
// --block, --sequence, --heads, --repetitions), shared by `recycle validate` and `recycle profile
// measure`.
#pragma once

#include <cstdint>

#include <CLI/CLI.hpp>

#include "executor/stage_math.hpp"

namespace recycle::tools {

/// Adds the workload's shape flags to `app`, writing into `shape`.
void add_shape_options(CLI::App& app, executor::StageShape& shape);

/// Adds --repetitions (timed runs of each operation; the median is kept).
void add_repetitions_option(CLI::App& app, std::int32_t& repetitions);

}  // namespace recycle::tools
