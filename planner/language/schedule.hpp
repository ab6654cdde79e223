// The schedule language shared by the planner, the simulator and the executor.
//
// Concepts:
//  - Layout: DP pipelines of PP stages, M micro-batches per pipeline per iteration, V interleave
//    chunks per worker. Virtual stage v is chunk v / pp; the placement says which physical stage
//    runs it: looped (v % pp, Megatron-LM's interleaving) or V-shaped (chunks alternate direction,
//    so the odd chunks run on pp - 1 - v % pp: ZB-V, DualPipe-V).
//  - Worker: one pipeline-stage replica (dp, stage); with tensor parallelism a whole TP group.
//  - Action: one step of a worker's list (planner/language/action.hpp), run in list order.
//  - Route: a micro-batch that runs at some stage on another pipeline's worker than its owner's
//    (re-routed around a failed worker). Which worker runs what is data, not part of the token.
//  - Schedule: the action list of every live worker, plus the failed workers and the routes.
// The rules a schedule must obey are in docs/architecture.md and checked by
// planner/language/validator.hpp.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "planner/language/action.hpp"

namespace recycle::planner {

/// Which physical stage runs each virtual stage (torch.distributed.pipelining's
/// `generate_stage_to_rank_mapping` styles "loop" and "v").
enum class Placement : std::uint8_t {
  kLoop,  ///< virtual stage v on stage v % pp
  kV,     ///< even chunks as kLoop, odd chunks reversed: v on pp - 1 - v % pp
};

/// "loop" or "v", as files and flags spell them.
[[nodiscard]] const char* placement_name(Placement placement) noexcept;

struct Layout {
  std::int32_t dp = 1;            ///< data-parallel pipelines
  std::int32_t pp = 1;            ///< pipeline stages
  std::int32_t microbatches = 1;  ///< per pipeline per iteration
  std::int32_t interleave = 1;    ///< model chunks per worker (virtual stages = pp * interleave)
  Placement placement = Placement::kLoop;

  [[nodiscard]] std::int32_t virtual_stages() const noexcept { return pp * interleave; }
  /// The physical stage that runs `virtual_stage`: the one definition of the placement.
  [[nodiscard]] std::int32_t stage_of(std::int32_t virtual_stage) const noexcept {
    if (virtual_stage >= 0 && virtual_stage < pp) return virtual_stage;  // chunk 0: no division
    const std::int32_t offset = virtual_stage % pp;
    return reversed(chunk_of(virtual_stage)) ? pp - 1 - offset : offset;
  }
  /// The virtual stage of chunk `chunk` on physical stage `stage` (the inverse of stage_of).
  [[nodiscard]] std::int32_t virtual_stage(std::int32_t stage, std::int32_t chunk) const noexcept {
    return chunk * pp + (reversed(chunk) ? pp - 1 - stage : stage);
  }
  /// Whether chunk `chunk` runs its stages from the last physical stage to the first.
  [[nodiscard]] bool reversed(std::int32_t chunk) const noexcept {
    return placement == Placement::kV && chunk % 2 == 1;
  }
  [[nodiscard]] std::int32_t chunk_of(std::int32_t virtual_stage) const noexcept {
    return virtual_stage / pp;
  }
  [[nodiscard]] std::int32_t workers() const noexcept { return dp * pp; }
  /// Worker (dp, stage)'s place among the layout's workers, dp-major: `dp * pp + stage`, the one
  /// numbering of workers (global ranks, flat per-worker arrays). Defined below WorkerId.
  [[nodiscard]] std::size_t index(const struct WorkerId& id) const noexcept;

  friend bool operator==(const Layout&, const Layout&) = default;
};

/// Largest values accepted anywhere a layout is read (flags, files); keeps products in int32.
inline constexpr std::int32_t kMaxDp = 65'536;
inline constexpr std::int32_t kMaxPp = 1'024;
inline constexpr std::int32_t kMaxMicrobatches = 65'536;
inline constexpr std::int32_t kMaxInterleave = 64;

struct WorkerId {
  std::int32_t dp = 0;
  std::int32_t stage = 0;

  friend auto operator<=>(const WorkerId&, const WorkerId&) = default;
};

/// Worker `id`'s place among workers of `pp` stages, dp-major (Layout::index, for code that
/// keeps the stage count alone).
[[nodiscard]] constexpr std::size_t worker_index(const WorkerId& id, std::size_t pp) noexcept {
  return static_cast<std::size_t>(id.dp) * pp + static_cast<std::size_t>(id.stage);
}

inline std::size_t Layout::index(const WorkerId& id) const noexcept {
  return worker_index(id, static_cast<std::size_t>(pp));
}

/// "(dp,stage)", as used in messages.
[[nodiscard]] std::string to_string(WorkerId id);

/// Pipeline `owner`'s micro-batch `microbatch` runs at physical stage `stage` on worker (dp,
/// stage).
struct Route {
  std::int32_t owner = 0;
  std::int32_t stage = 0;
  std::int32_t microbatch = 0;
  std::int32_t dp = 0;

  friend auto operator<=>(const Route&, const Route&) = default;
};

struct WorkerSchedule {
  WorkerId id;
  std::vector<Action> actions;

  friend bool operator==(const WorkerSchedule&, const WorkerSchedule&) = default;
};

struct Schedule {
  std::string generator;  ///< which generator wrote it ("1f1b", "zb-h1", "file", ...)
  Layout layout;
  /// Each stage steps its optimizer as soon as its own gradients are reduced (ReCycle's staggered
  /// optimizer) instead of waiting at a global barrier over all stages.
  bool staggered_optimizer = false;
  /// Weight versions each stage keeps: 1, or 2 under PipeDream-2BW's double buffering, where a
  /// forward of iteration i reads the weights stepped after iteration i-2, not i-1, so it need not
  /// wait for the previous iteration's step (the optimizer is staggered too).
  std::int32_t weight_versions = 1;
  std::vector<WorkerId> failed;         ///< sorted
  std::vector<Route> routes;            ///< sorted; empty when nothing is re-routed
  std::vector<WorkerSchedule> workers;  ///< live workers, sorted by (dp, stage)

  /// True if any worker's list holds an action other than F, I, W and B (SEND_*, RECV_*,
  /// REDUCE_GRAD, OPT): the schedule says how it communicates, so data another worker makes must
  /// arrive through a SEND/RECV pair. Otherwise it is compute-only and is lowered before it runs.
  /// Lists that run across iterations (has_lags: 2bw) place their own REDUCE_GRAD and OPT, so for
  /// them only a SEND_* or RECV_* says so.
  [[nodiscard]] bool is_lowered() const noexcept;
  /// Whether any action belongs to the previous iteration (Action::lag).
  [[nodiscard]] bool has_lags() const noexcept;

  friend bool operator==(const Schedule&, const Schedule&) = default;
};

/// The optimizer mode as files and reports name it: "barrier", "staggered" or "2bw" (staggered,
/// with two weight versions).
[[nodiscard]] const char* optimizer_name(const Schedule& schedule) noexcept;

/// Which worker runs a (owner, stage, micro-batch): the route if there is one, else the owner's.
/// Built once per schedule; lookups are O(1).
class RouteTable {
 public:
  explicit RouteTable(const Schedule& schedule);

  /// The dp index of the worker that runs `owner`'s micro-batch at physical `stage`.
  [[nodiscard]] std::int32_t dp_of(std::int32_t owner, std::int32_t stage,
                                   std::int32_t microbatch) const noexcept {
    // Most (owner, stage) pairs have no route: their small flag table answers without touching
    // the per-micro-batch table (at 16,384 GPUs half a megabyte, read at random).
    return routed_[static_cast<std::size_t>(owner) * static_cast<std::size_t>(layout_.pp) +
                   static_cast<std::size_t>(stage)] != 0
               ? dp_[index(owner, stage, microbatch)]
               : owner;
  }
  /// The worker that runs virtual stage `virtual_stage` of `owner`'s micro-batch.
  [[nodiscard]] WorkerId worker_of(std::int32_t owner, std::int32_t virtual_stage,
                                   std::int32_t microbatch) const noexcept {
    const std::int32_t stage = layout_.stage_of(virtual_stage);
    return {dp_of(owner, stage, microbatch), stage};
  }

 private:
  [[nodiscard]] std::size_t index(std::int32_t owner, std::int32_t stage,
                                  std::int32_t microbatch) const noexcept {
    return (static_cast<std::size_t>(owner) * static_cast<std::size_t>(layout_.pp) +
            static_cast<std::size_t>(stage)) *
               static_cast<std::size_t>(layout_.microbatches) +
           static_cast<std::size_t>(microbatch);
  }
  Layout layout_;
  std::vector<std::int32_t> dp_;
  std::vector<std::uint8_t> routed_;  ///< per (owner, stage): whether any of its routes are there
};

}  // namespace recycle::planner
