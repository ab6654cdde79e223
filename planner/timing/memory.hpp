// Memory in bytes: what a worker must hold, and how many micro-batches of activations fit.
//
// A worker of stage s keeps the stage's parameters, their gradients and the optimizer state
// (CostModel::state_bytes) all the time, plus the activations of every micro-batch it has run F
// for and not yet W (or B) for, its own and the re-routed ones alike (CostModel::held_bytes per
// chunk). All of it must fit the worker's GPUs (CostModel::worker_memory: GPU memory x tensor
// parallel). A cost model without memory (`--costs`) limits nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "planner/language/schedule.hpp"
#include "planner/timing/cost_model.hpp"

namespace recycle::planner {

/// Per physical stage, the most micro-batches of activations (all the worker's chunks of each)
/// that fit next to the stage's state: floor((worker_memory - state_bytes) / activations of one
/// micro-batch). nullopt when the model knows no memory. InputError naming `source` when some
/// stage cannot hold even one micro-batch, saying by how much.
/// `weight_versions`: copies of the parameters each worker keeps (2 for 2bw). `failed`: the
/// failed workers, whose loss re-splits a sharded optimizer state over a stage's live ranks
/// (CostModel::kept_bytes).
[[nodiscard]] std::optional<std::vector<std::int32_t>> memory_limits(
    const CostModel& model, const Layout& layout, const std::string& source,
    std::int32_t weight_versions = 1, std::span<const WorkerId> failed = {});

/// The per-stage limit the planners work to: with memory in the model, what fits (capped by
/// `given`); without, `given`, else `fallback`, on every stage. InputError as memory_limits.
[[nodiscard]] std::vector<std::int32_t> planning_limits(const CostModel& model,
                                                        const Layout& layout,
                                                        std::optional<std::int32_t> given,
                                                        std::int32_t fallback,
                                                        std::span<const WorkerId> failed = {});

/// Per worker of `schedule` (in its order), the most bytes it holds: its stage's state (with the
/// schedule's weight versions) plus the peak of its activations over the list (those a list that
/// runs across iterations holds from the one before included).
[[nodiscard]] std::vector<Bytes> peak_memory(const Schedule& schedule, const CostModel& model);

/// InputError naming `source` when a stage cannot hold one micro-batch (as memory_limits) or a
/// worker of `schedule` needs more memory than it has, saying which, how much and by how much;
/// nothing when the model knows no memory.
void check_memory(const Schedule& schedule, const CostModel& model, const std::string& source);

/// "12.5 GB".
[[nodiscard]] std::string format_gb(Bytes bytes);

}  // namespace recycle::planner
