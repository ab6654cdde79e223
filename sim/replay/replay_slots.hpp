// The job's place on its cluster during a replay: job node slots, the physical nodes filling them,
// and the spare pool. Slot n holds GPUs [n x G, (n + 1) x G) of the job's pipeline-major placement
// (global rank dp x PP + stage, TP GPUs per worker; planner/timing/cluster.hpp), so a slot's
// workers are the ranks whose GPUs it holds. At the start slot n is filled by node n and the nodes
// past the job's are spares. A node that fails leaves its slot empty; a node that is up again and
// has joined goes to the spare pool; policies fill empty slots from the pool.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <vector>

#include "planner/language/schedule.hpp"

namespace recycle::sim {

/// A set of node indices below a bound, kept as one bit a node: built in one pass of word writes
/// (a cluster of 2^24 nodes starts with 2 MB of set bits, where a balanced tree took seconds and
/// over 500 MB), its lowest member found from a cursor that only moves down on insert.
class NodePool {
 public:
  /// The pool of nodes [first, last) out of `size` nodes.
  NodePool(std::int64_t size, std::int64_t first, std::int64_t last);
  void insert(std::int64_t node);
  /// Whether the node was in the pool.
  bool erase(std::int64_t node);
  [[nodiscard]] bool contains(std::int64_t node) const;
  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
  [[nodiscard]] std::int64_t size() const noexcept { return count_; }
  /// The lowest node in the pool; the pool must not be empty.
  [[nodiscard]] std::int64_t lowest();

 private:
  std::vector<std::uint64_t> words_;
  std::int64_t count_ = 0;
  std::size_t cursor_ = 0;  ///< no word below it has a bit set
};

class JobSlots {
 public:
  /// `job_nodes` slots on a cluster of `cluster_nodes` nodes of `gpus_per_node` GPUs.
  JobSlots(std::int64_t job_nodes, std::int64_t cluster_nodes, const planner::Layout& layout,
           std::int32_t tensor_parallel, std::int32_t gpus_per_node);

  /// The node fails. Returns the slot it held (empty now), or -1.
  std::int64_t node_down(std::int64_t node);
  /// The node is up and has joined: it goes to the spare pool.
  void node_ready(std::int64_t node);
  /// Which of the empty slots (ascending, at least two) the next spare fills.
  using SlotChoice = std::function<std::int64_t(const std::vector<std::int64_t>& empty)>;
  /// Fills empty slots with the lowest spares, one at a time, each the slot `choose` picks then
  /// (without a choice, the lowest); returns the slots filled.
  std::vector<std::int64_t> fill_from_spares(const SlotChoice& choose = {});
  /// Re-forms the job with as many whole pipelines as the live nodes allow (at most DP): when
  /// every pipeline sits on whole nodes of its own, the pipelines past that number are parked
  /// (their nodes go to the spare pool, their workers are neither live nor failed) and the empty
  /// slots of the first ones are filled from the pool; otherwise (pipelines share nodes)
  /// fill_from_spares().
  void regroup();
  /// Whole pipelines regroup() would form now (DP when pipelines share nodes).
  [[nodiscard]] std::int32_t pipelines_possible() const;
  /// Pipelines in use: DP unless regroup() parked some.
  [[nodiscard]] std::int32_t active_pipelines() const noexcept { return active_pipelines_; }

  /// The workers of the empty slots, sorted.
  [[nodiscard]] std::vector<planner::WorkerId> failed_workers() const;
  /// The workers of the empty slots but `slot`, sorted: who would still be failed were it filled.
  [[nodiscard]] std::vector<planner::WorkerId> failed_workers_but(std::int64_t slot) const;
  /// The workers slot `slot` holds (a worker wider than a node is in several slots).
  [[nodiscard]] std::vector<planner::WorkerId> workers_of(std::int64_t slot) const;
  /// Filled slots of the pipelines in use.
  [[nodiscard]] std::int64_t live_nodes() const noexcept {
    return active_slots_ - static_cast<std::int64_t>(empty_.size());
  }
  [[nodiscard]] std::int64_t live_workers() const;
  /// Whether every stage has a live worker in the pipelines in use.
  [[nodiscard]] bool every_stage_live() const;
  /// Pipelines in use none of whose workers is in an empty slot.
  [[nodiscard]] std::int32_t complete_pipelines() const;
  [[nodiscard]] bool full() const noexcept { return empty_.empty(); }
  [[nodiscard]] std::int64_t spares() const noexcept {
    return static_cast<std::int64_t>(spares_.size());
  }

 private:
  std::int64_t active_slots_;  ///< slots of the pipelines in use (all of the job's, unless parked)
  planner::Layout layout_;
  std::int32_t active_pipelines_;
  std::int32_t tp_;
  std::int32_t gpus_per_node_;
  std::vector<std::int32_t> slot_of_;  ///< per node: its slot, or -1 (at most 2^24 nodes)
  std::vector<std::int64_t> node_of_;  ///< per slot of the job: its node, or -1
  std::set<std::int64_t> empty_;       ///< slots in use without a node
  NodePool spares_;                    ///< nodes up, joined and without a slot
};

}  // namespace recycle::sim
