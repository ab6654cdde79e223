// Folding identical pipelines: pipelines that run the same lists at the same costs run at the
// same times, so the simulator runs one of each and writes its records for the others too.
//
// A pipeline folds onto an earlier one when
//  - both have every stage's worker, run only their own micro-batches and appear in no route;
//  - their workers' lists are the same action for action (the owner aside);
//  - both start at the same offset within a node (planner/timing/cluster.hpp places rank dp x pp +
//  stage
//    on consecutive GPUs; any offset when the network is free or every pipeline fills whole
//    nodes), so every transfer of one costs what the same transfer of the other costs;
//  - the schedule lists its workers sorted by (dp, stage), as schedules do.
// Such pipelines touch the rest of the schedule only through each stage's all-reduce and the
// optimizer barrier, which start when the last of their members arrives: a folded pipeline arrives
// with the one it folds onto, so those start at the same times; each all-reduce keeps the time the
// whole schedule's peers give it (Cluster::set_all_reduce_times). Ties go to the first member in
// list order, which is the one kept; a cause that came through the barrier or an all-reduce stays
// with the worker that arrived last, any other moves to the repeating worker's own pipeline. The
// run is therefore the one the whole schedule gives, record for record
// (tests/sim/pipeline_fold_test.cpp compares them), at the cost of one pipeline per class plus
// writing the records: a fault-free iteration of DP 128 pipelines simulates one of them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "planner/language/schedule.hpp"
#include "planner/timing/cost_model.hpp"

namespace recycle::sim {

struct PipelineFold {
  /// The workers simulated: those of every pipeline that does not fold, in the input's order.
  planner::Schedule schedule;
  /// Per worker of the whole schedule: the worker of `schedule` whose run it repeats (itself, for
  /// a worker that is simulated).
  std::vector<std::int32_t> source;
  std::int32_t folded_pipelines = 0;  ///< pipelines left out of `schedule`
};

/// The fold of `schedule` on `model`; nullopt when no pipeline folds.
[[nodiscard]] std::optional<PipelineFold> fold_pipelines(const planner::Schedule& schedule,
                                                         const planner::CostModel& model);

/// The whole schedule's lists from the simulated ones (`ran`: fold.schedule as it ran, lowered and
/// with its implied actions): each folded worker gets its source's list, owners renamed.
[[nodiscard]] planner::Schedule unfold_schedule(const planner::Schedule& whole,
                                                const PipelineFold& fold,
                                                const planner::Schedule& ran);

/// Where the records of a folded run go in the whole schedule's timeline: each simulated worker's
/// records once for every worker that repeats it, their causes moved to that worker's pipeline.
/// The simulator's recorder writes them there as it walks the folded graph, so the whole timeline
/// is the only one held.
class FoldMap {
 public:
  /// `whole`: the schedule that was folded (its workers); `list_sizes` and `sends`: per simulated
  /// worker, its actions (implied ones included) and its transfers in one iteration.
  FoldMap(const PipelineFold& fold, const planner::Schedule& whole,
          std::span<const std::int32_t> list_sizes, std::span<const std::int32_t> sends);

  [[nodiscard]] std::int32_t workers() const noexcept {
    return static_cast<std::int32_t>(list_size_.size());
  }
  /// Actions in one iteration of whole worker `w`'s list.
  [[nodiscard]] std::int32_t list_size(std::int32_t w) const noexcept {
    return list_size_[static_cast<std::size_t>(w)];
  }
  static constexpr bool kFolds = true;

  /// The whole worker that simulated worker `r` is.
  [[nodiscard]] std::int32_t self(std::int32_t r) const noexcept {
    return whole_of_[static_cast<std::size_t>(r)];
  }
  /// The transfers simulated worker `r` sends, by their numbers in the simulated run: [first,
  /// last).
  [[nodiscard]] std::pair<std::int32_t, std::int32_t> sends(std::int32_t r) const noexcept {
    const auto k = static_cast<std::size_t>(r);
    return {ran_first_send_[k], ran_first_send_[k + 1]};
  }
  /// The whole workers whose records are simulated worker `r`'s (self(r) among them).
  [[nodiscard]] std::span<const std::int32_t> copies(std::int32_t r) const noexcept {
    const auto k = static_cast<std::size_t>(r);
    return std::span<const std::int32_t>(copies_).subspan(
        static_cast<std::size_t>(first_copy_[k]),
        static_cast<std::size_t>(first_copy_[k + 1] - first_copy_[k]));
  }
  /// The whole worker that holds, for whole worker `w`, a cause lying on simulated worker `r`:
  /// the worker of w's own pipeline at r's stage when r is in the pipeline w repeats, unless the
  /// cause is `shared` (it came through the optimizer barrier or an all-reduce, and stays on the
  /// worker that arrived last); else r's own.
  [[nodiscard]] std::int32_t worker(std::int32_t r, std::int32_t w, bool shared) const noexcept {
    const auto k = static_cast<std::size_t>(r);
    if (shared || dp_[k] != source_dp_[static_cast<std::size_t>(w)]) return whole_of_[k];
    return at_[planner::worker_index({own_dp_[static_cast<std::size_t>(w)], stage_[k]}, pp_)];
  }
  /// The whole run's number for transfer `t` of the simulated run (sent by simulated worker `r`)
  /// as whole worker `w` sends it.
  [[nodiscard]] std::int32_t transfer(std::int32_t t, std::int32_t r,
                                      std::int32_t w) const noexcept {
    return first_send_[static_cast<std::size_t>(w)] +
           (t - ran_first_send_[static_cast<std::size_t>(r)]);
  }
  /// Transfers of one iteration, over every worker.
  [[nodiscard]] std::int32_t transfers() const noexcept { return first_send_.back(); }
  /// Graph nodes of one iteration on the workers that are not simulated (their actions and the
  /// transfers they send): what Timeline::events adds for them.
  [[nodiscard]] std::uint64_t folded_nodes() const noexcept { return folded_nodes_; }

 private:
  std::size_t pp_ = 1;
  std::vector<std::int32_t> list_size_;   // per whole worker
  std::vector<std::int32_t> first_send_;  // per whole worker, size workers + 1
  std::vector<std::int32_t> own_dp_;      // per whole worker
  std::vector<std::int32_t> source_dp_;   // per whole worker: the dp of the worker it repeats
  std::vector<std::int32_t> at_;          // per (dp, stage): the whole worker, or -1
  std::vector<std::int32_t> first_copy_;  // per simulated worker, into copies_; size + 1
  std::vector<std::int32_t> copies_;
  std::vector<std::int32_t> whole_of_;        // per simulated worker
  std::vector<std::int32_t> dp_, stage_;      // per simulated worker
  std::vector<std::int32_t> ran_first_send_;  // per simulated worker
  std::uint64_t folded_nodes_ = 0;
};

}  // namespace recycle::sim
