// One step of a worker's schedule, and its text token.
//
// Tokens follow torch.distributed.pipelining: `{virtual_stage}{TYPE}{microbatch}` (`2F0`, `1I3`,
// `0B2`, `1SEND_F4`), `{virtual_stage}{TYPE}` for per-iteration actions (`3REDUCE_GRAD`, `3OPT`),
// and `@owner` appended when the micro-batch belongs to another pipeline than the worker's own
// (`2F5@1`: virtual stage 2, forward of pipeline 1's micro-batch 5). A trailing `'` marks an
// action of the previous iteration listed in this one (`0B7'`, `0OPT'`): PipeDream-2BW runs
// without a flush, so a stage's last backwards of one batch come after the next batch's first
// forwards (docs/architecture.md, "Semantics").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace recycle::planner {

enum class ActionType : std::uint8_t {
  kForward,         ///< F
  kBackwardInput,   ///< I: gradient w.r.t. the stage input (the papers' B)
  kBackwardWeight,  ///< W: gradient w.r.t. the stage weights
  kBackward,        ///< B: I then W, fused
  kSendF,           ///< SEND_F: send this virtual stage's forward output downstream
  kRecvF,           ///< RECV_F: receive this virtual stage's forward input from upstream
  kSendB,           ///< SEND_B: send this virtual stage's input gradient upstream
  kRecvB,           ///< RECV_B: receive this virtual stage's output gradient from downstream
  kReduceGrad,      ///< REDUCE_GRAD: all-reduce the stage's weight gradients over live DP peers
  kOptimizer,       ///< OPT: optimizer step
};

[[nodiscard]] std::string_view type_name(ActionType type) noexcept;
/// F, I, W, B (inline: the graph builder, the lowering and the schedule's scans ask per action).
[[nodiscard]] constexpr bool is_compute(ActionType type) noexcept {
  return type == ActionType::kForward || type == ActionType::kBackwardInput ||
         type == ActionType::kBackwardWeight || type == ActionType::kBackward;
}
/// SEND_*, RECV_*
[[nodiscard]] constexpr bool is_comm(ActionType type) noexcept {
  return type == ActionType::kSendF || type == ActionType::kRecvF || type == ActionType::kSendB ||
         type == ActionType::kRecvB;
}
/// REDUCE_GRAD, OPT
[[nodiscard]] constexpr bool is_per_iteration(ActionType type) noexcept {
  return type == ActionType::kReduceGrad || type == ActionType::kOptimizer;
}

struct Action {
  ActionType type = ActionType::kForward;
  std::int32_t virtual_stage = 0;  ///< stage + chunk * pp
  std::int32_t microbatch = -1;    ///< -1 for REDUCE_GRAD and OPT
  std::int32_t owner = 0;          ///< pipeline (dp index) whose samples these are; always explicit
  /// 0: this iteration's; 1: the previous iteration's (its list runs a step behind: `'`). A
  /// SEND/RECV carries its producer's lag, or one more when the pair is listed in the list after
  /// its producer's (a lagged reader's, planner/language/lower.hpp): a transfer never spans two
  /// lists.
  std::int32_t lag = 0;

  friend bool operator==(const Action&, const Action&) = default;
};

/// The token of `action` on a worker whose dp index is `worker_dp` (adds `@owner` if it differs).
[[nodiscard]] std::string to_token(const Action& action, std::int32_t worker_dp);

/// Parses a token; `owner` is set to `worker_dp` when the token has no `@owner`.
/// Returns nullopt on a malformed token (callers add where it was).
[[nodiscard]] std::optional<Action> parse_token(std::string_view token, std::int32_t worker_dp);

}  // namespace recycle::planner
