// The action vocabulary of torch.distributed.pipelining's `_PipelineScheduleRuntime`, per torch
// version, both ways: what `recycle plan --format csv-comms --torch-version V` writes for a lowered
// schedule, and how the tokens torch writes (`_dump_csv` of a lowered schedule) read back into
// recycle's schedule language. docs/formats.md lists the differences between the versions.
//
// Writing one rank's lowered list (recycle's: compute, SEND/RECV, REDUCE_GRAD, OPT):
//  - every version: no OPT (torch steps the optimizer outside the schedule);
//  - 2.8: no REDUCE_GRAD (it has none; the runtime scales each stage's gradients at its last
//    backward), no waits;
//  - 2.15: REDUCE_GRAD then WAIT_REDUCE_GRAD for every virtual stage of the rank, right after the
//    stage's last W or B (and the SEND that follows it), as torch's `_add_reduce_grad` places
//    them: the runtime scales a stage's gradients by 1/M at its REDUCE_GRAD, so a stage without one
//    keeps M times its gradient. One WAIT_SEND_F right after the local backward (I or B) of the
//    sent stage and micro-batch, which proves the receiver has the data; every other send's
//    WAIT_SEND_F/B at the end of the list, in the order of the sends (torch's `_add_wait_send`).
// Reading a cell: the torch tokens that have a meaning in recycle's language become those actions
// (an OVERLAP_F_B `(0F1;7B0)OVERLAP_F_B` its sub-actions in order); the ones that only pace
// torch's runtime (UNSHARD, RESHARD, WAIT_SEND_F/B, WAIT_REDUCE_GRAD) are read and dropped: a
// SEND in recycle's language ends when its transfer has, and the simulator keeps no FSDP shards.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "planner/language/schedule.hpp"

namespace recycle::planner {

enum class TorchVersion : std::uint8_t { k2_8, k2_15 };
inline constexpr TorchVersion kNewestTorch = TorchVersion::k2_15;

/// "2.8", "2.15": the names `--torch-version` takes, oldest first.
[[nodiscard]] const std::vector<std::string>& torch_version_names();
[[nodiscard]] std::optional<TorchVersion> parse_torch_version(std::string_view name);

/// One rank's lowered list in `version`'s tokens. `actions` are pipeline 0's (owner 0), in the
/// order recycle's lowering (planner/language/lower.hpp) gives them; `microbatches` is the
/// layout's.
[[nodiscard]] std::vector<std::string> torch_comms_row(const std::vector<Action>& actions,
                                                       std::int32_t microbatches,
                                                       TorchVersion version);

/// A torch cell read: the actions it stands for (none for a token that only paces torch's
/// runtime), and the virtual stage of every token in it, for the placement check.
struct TorchCell {
  std::vector<Action> actions;
  std::vector<std::int32_t> virtual_stages;
};

/// Parses one non-empty cell of any supported version (and recycle's own OPT); nullopt when it
/// is not a token.
[[nodiscard]] std::optional<TorchCell> parse_torch_cell(std::string_view cell);

}  // namespace recycle::planner
