// The cluster model: where workers sit and what moving bytes between them costs.
//
// Placement: workers are numbered by global rank `dp * pp + stage` (failed workers keep their
// slot) and each takes `tensor_parallel` consecutive GPUs, so worker r holds GPUs
// [r * tp, (r + 1) * tp) and GPU g sits on node g / gpus_per_node. Two workers talk inside a node
// only when both lie wholly on one and the same node; a worker that spans nodes talks between
// nodes with everyone.
//
// Costs (profiles/link.hpp): a point-to-point transfer of `bytes` takes `latency + bytes /
// bandwidth` of the link it uses; a ring all-reduce of `bytes` over n peers takes
// `2(n-1)/n * bytes / bandwidth + 2(n-1) * latency` on the slowest link of the ring (inter-node
// unless every peer is on one node), and nothing when n = 1. Bandwidths are a worker's: what all
// its GPUs move at once. A ring that crosses nodes with k of its peers on every node runs k
// rings side by side, one through each peer's network link (as NCCL runs one ring per NIC), so
// it crosses at k times the bandwidth (k = the fewest peers on any node it touches). A profile
// that states an all-reduce bus bandwidth (measured, as nccl-tests reports busbw) sets the
// all-reduce's bandwidth instead, wherever its peers are: `2(n-1)/n * bytes / busbw + 2(n-1) *
// latency`, the latency still the ring's link's. A free network (the `--costs` mode) charges
// nothing.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "planner/language/schedule.hpp"
#include "profiles/link.hpp"
#include "profiles/profile.hpp"

namespace recycle::planner {

using profiles::Link;
using profiles::ring_all_reduce_time;

class Cluster {
 public:
  /// A network that moves any number of bytes in no time.
  Cluster() = default;
  /// Workers of a `pp`-stage layout placed on the nodes of `hardware`, `tensor_parallel` GPUs
  /// each, by global rank dp * pp + stage.
  Cluster(const profiles::HardwareSpec& hardware, std::int32_t tensor_parallel, std::int32_t pp);

  [[nodiscard]] bool free() const noexcept { return free_; }
  [[nodiscard]] std::int32_t gpus_per_node() const noexcept { return gpus_per_node_; }
  [[nodiscard]] std::int32_t tensor_parallel() const noexcept { return tensor_parallel_; }

  /// First and last node holding a GPU of `worker`.
  [[nodiscard]] std::int64_t first_node(WorkerId worker) const noexcept;
  [[nodiscard]] std::int64_t last_node(WorkerId worker) const noexcept;
  /// True when both workers lie wholly on one and the same node.
  [[nodiscard]] bool same_node(WorkerId a, WorkerId b) const noexcept;
  /// Whether relabelling the pipelines (dp indices) leaves every cost unchanged: a free network,
  /// or each pipeline on whole nodes of its own (pp x tensor_parallel a multiple of the GPUs per
  /// node). Failure sets are normalized (planner/language/failures.hpp) only then.
  [[nodiscard]] bool pipelines_interchangeable() const noexcept {
    return free_ || (static_cast<std::int64_t>(pp_) * tensor_parallel_) % gpus_per_node_ == 0;
  }

  [[nodiscard]] const Link& link(WorkerId a, WorkerId b) const noexcept;
  [[nodiscard]] Nanos transfer_time(WorkerId from, WorkerId to, Bytes bytes) const noexcept;
  /// The least transfer_time of `bytes` from any worker of `from` to any of `to` (none when
  /// either is empty).
  [[nodiscard]] Nanos least_transfer_time(std::span<const WorkerId> from,
                                          std::span<const WorkerId> to, Bytes bytes) const;
  /// Ring all-reduce over `peers` (the live DP peers of one stage), plus the absent ring peers.
  [[nodiscard]] Nanos all_reduce_time(std::span<const WorkerId> peers, Bytes bytes) const noexcept;

  /// Every all-reduce ring also holds `peers` more members outside the layout, placed like the
  /// ones in it: one pipeline simulated alone then stands for itself and `peers` identical
  /// pipelines (which reach every all-reduce at the same time), as the job replay does to time a
  /// fault-free configuration of DP pipelines with one (sim/replay/replay_rates.hpp).
  void set_absent_ring_peers(std::int32_t peers) noexcept { absent_ring_peers_ = peers; }
  [[nodiscard]] std::int32_t absent_ring_peers() const noexcept { return absent_ring_peers_; }

  /// Every all-reduce of stage s takes `times[s]`, whoever its peers: a schedule simulated in
  /// place of a larger one keeps the larger one's all-reduces (sim/pipeline_fold.hpp). Empty (the
  /// default): timed from the peers.
  void set_all_reduce_times(std::vector<Nanos> times) { all_reduce_times_ = std::move(times); }

 private:
  [[nodiscard]] std::int64_t rank(WorkerId worker) const noexcept {
    return static_cast<std::int64_t>(worker_index(worker, static_cast<std::size_t>(pp_)));
  }

  bool free_ = true;
  std::int32_t pp_ = 1;
  std::int32_t gpus_per_node_ = 1;
  std::int32_t tensor_parallel_ = 1;
  Link intra_;
  Link inter_;
  BytesPerSecond bus_bandwidth_ = 0;  ///< > 0: the all-reduce's, measured
  std::int32_t absent_ring_peers_ = 0;
  std::vector<Nanos> all_reduce_times_;  ///< per stage; empty: timed from the peers
};

}  // namespace recycle::planner
