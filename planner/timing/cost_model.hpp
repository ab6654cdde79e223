// What the simulator charges for each action: compute times per virtual stage, the optimizer step
// per stage, the bytes each send moves and each micro-batch holds, and the cluster they run on.
// Two sources: a profile (planner/timing/cluster.hpp places the workers on its hardware), or bare
// compute times (`--costs F,I,W`: a free network and a free optimizer, so results can be checked by
// hand).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "planner/language/costs.hpp"
#include "planner/language/schedule.hpp"
#include "planner/timing/cluster.hpp"
#include "profiles/profile.hpp"

namespace recycle::planner {

struct CostModel {
  Costs compute;                        ///< F, I, W per virtual stage; OPT per physical stage
  std::vector<Bytes> activation_bytes;  ///< per virtual stage: held by one micro-batch from F to W
  std::vector<Bytes> output_bytes;      ///< per virtual stage: what its F sends downstream
  std::vector<Bytes> param_bytes;       ///< per physical stage: what REDUCE_GRAD all-reduces
  /// Per physical stage: what a worker keeps whatever it runs (parameters, their gradients, the
  /// optimizer state).
  std::vector<Bytes> state_bytes;
  /// Per physical stage: of state_bytes, one rank's optimizer state.
  std::vector<Bytes> optimizer_state_bytes;
  /// Ranks the optimizer state is sharded over and copies of each shard
  /// (profiles::Profile::optimizer_shards); 1 and 1: every rank holds it all.
  std::int32_t optimizer_shards = 1;
  std::int32_t optimizer_shard_copies = 1;
  Bytes worker_memory = 0;  ///< GPU memory of one worker (all its GPUs); 0: not known
  Cluster cluster;          ///< default: a free network

  /// Compute times only: no bytes, free network, free optimizer unless `costs.optimizer` says.
  [[nodiscard]] static CostModel compute_only(Costs costs);

  /// A profile of `layout.pp` stages (InputError naming `source` otherwise). A stage's times and
  /// activation bytes are split evenly over its interleave chunks; each chunk sends the stage's
  /// whole output_bytes (the activation tensor between chunks has the same shape).
  [[nodiscard]] static CostModel from_profile(const profiles::Profile& profile,
                                              const Layout& layout, const std::string& source);

  /// Bytes a SEND_F (virtual stage v's output) or SEND_B (the gradient of v's input, shaped like
  /// v-1's output) moves; 0 for other actions.
  [[nodiscard]] Bytes send_bytes(const Action& send) const noexcept;
  /// Bytes of activations one micro-batch holds at `virtual_stage` from F until W.
  [[nodiscard]] Bytes held_bytes(std::int32_t virtual_stage) const noexcept;
  /// Bytes the all-reduce of `stage`'s gradients moves.
  [[nodiscard]] Bytes gradient_bytes(std::int32_t stage) const noexcept;
  /// The all-reduce of `stage`'s gradients over `peers` on the cluster.
  [[nodiscard]] Nanos all_reduce_time(std::int32_t stage,
                                      std::span<const WorkerId> peers) const noexcept {
    return cluster.all_reduce_time(peers, gradient_bytes(stage));
  }
  /// Bytes a worker of `stage` keeps whatever it runs (state_bytes), with `weight_versions`
  /// copies of the parameters (2 under PipeDream-2BW; gradients and optimizer state stay one).
  /// `live_ranks` > 0: the stage's live data-parallel ranks. A sharded optimizer state with one
  /// copy of each shard is re-split over them when a rank is lost (the job reloads it from the
  /// checkpoint, docs/policies.md), so each holds ceil(shards x shard / live_ranks).
  [[nodiscard]] Bytes kept_bytes(std::int32_t stage, std::int32_t weight_versions = 1,
                                 std::int32_t live_ranks = 0) const noexcept;
  /// Whether losing data-parallel ranks re-splits the optimizer state (kept_bytes).
  [[nodiscard]] bool reshards_on_failure() const noexcept {
    return optimizer_shards > 1 && optimizer_shard_copies == 1;
  }
};

}  // namespace recycle::planner
