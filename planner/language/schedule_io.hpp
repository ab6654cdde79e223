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

#include <optional>
#include <string>

#include "core/json.hpp"
#include "planner/language/schedule.hpp"
#include "planner/language/steady_state.hpp"
#include "planner/language/torch_dialect.hpp"

namespace recycle::planner {

enum class CsvFormat { kComputeOnly, kComputeComms };

/// With `steady`, the file also says what the schedule was predicted to take ("makespan_s",
/// "period_s"); readers ignore those keys.
[[nodiscard]] std::string to_json(const Schedule& schedule, const SteadyState* steady = nullptr);
/// A layout as schedule files write it: {"dp", "pp", "microbatches", "interleave"[, "placement"]}
/// (placement only when not the loop), and read back (interleave 1 and the loop when absent).
[[nodiscard]] std::string layout_json(const Layout& layout);
[[nodiscard]] Layout read_layout(const JsonView& view);
[[nodiscard]] Schedule schedule_from_json(const std::string& text, const std::string& source);
/// A schedule object inside a larger JSON document (a plan table); errors name its path.
[[nodiscard]] Schedule schedule_from_json(const JsonView& view);

/// `compute_comms` is written in `version`'s vocabulary (planner/language/torch_dialect.hpp).
[[nodiscard]] std::string to_pytorch_csv(const Schedule& schedule, CsvFormat format,
                                         TorchVersion version = kNewestTorch);
/// dp = 1, pp = the number of rows; micro-batches, interleave and the placement are inferred from
/// the tokens (the placement that puts every token on its row, looped when both do), or the
/// placement given is checked. Reads every supported torch version's tokens.
[[nodiscard]] Schedule schedule_from_pytorch_csv(const std::string& text, const std::string& source,
                                                 std::optional<Placement> placement = {});

/// Reads a schedule file: JSON if it starts with '{', else PyTorch CSV. `placement`, if given,
/// must be the file's.
[[nodiscard]] Schedule load_schedule(const std::string& path,
                                     std::optional<Placement> placement = {});

}  // namespace recycle::planner
