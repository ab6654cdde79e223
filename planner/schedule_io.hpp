// Schedule files.
//  - Canonical JSON, format "recycle.schedule/1" (docs/formats.md): layout, failed workers, routes
//    and every live worker's action tokens.
//  - PyTorch pipelining CSV (torch.distributed.pipelining `_dump_csv`/`_load_csv`): one row per
//    pipeline rank (= stage) of one pipeline, one cell per action token. Only fault-free schedules,
//    whose pipelines all run the same lists, can be written; pipeline 0's lists are. `compute_only`
//    places compute actions on a grid of unit time steps (every action one step, empty cell =
//    idle); `compute_comms` lists each rank's lowered actions in order, without idle cells.
// Readers turn every malformed input into an InputError naming the file and the field or line.
#pragma once

#include <string>

#include "core/json.hpp"
#include "planner/period.hpp"
#include "planner/schedule.hpp"

namespace recycle::planner {

enum class CsvFormat { kComputeOnly, kComputeComms };

/// With `steady`, the file also says what the schedule was predicted to take ("makespan_s",
/// "period_s"); readers ignore those keys.
[[nodiscard]] std::string to_json(const Schedule& schedule, const SteadyState* steady = nullptr);
[[nodiscard]] Schedule schedule_from_json(const std::string& text, const std::string& source);
/// A schedule object inside a larger JSON document (a plan table); errors name its path.
[[nodiscard]] Schedule schedule_from_json(const JsonView& view);

[[nodiscard]] std::string to_pytorch_csv(const Schedule& schedule, CsvFormat format);
/// dp = 1, pp = the number of rows; micro-batches and interleave are inferred from the tokens.
[[nodiscard]] Schedule schedule_from_pytorch_csv(const std::string& text,
                                                 const std::string& source);

/// Reads a schedule file: JSON if it starts with '{', else PyTorch CSV.
[[nodiscard]] Schedule load_schedule(const std::string& path);

}  // namespace recycle::planner
