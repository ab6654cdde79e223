#include "planner/timing/cluster.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace recycle::planner {

Cluster::Cluster(const profiles::HardwareSpec& hardware, std::int32_t tensor_parallel,
                 std::int32_t pp)
    : free_(false),
      pp_(pp),
      gpus_per_node_(hardware.gpus_per_node),
      tensor_parallel_(tensor_parallel),
      intra_{hardware.intra_node_bandwidth, hardware.intra_node_latency},
      inter_{hardware.inter_node_bandwidth, hardware.inter_node_latency},
      bus_bandwidth_(hardware.all_reduce_bus_bandwidth) {}

std::int64_t Cluster::first_node(WorkerId worker) const noexcept {
  return rank(worker) * tensor_parallel_ / gpus_per_node_;
}

std::int64_t Cluster::last_node(WorkerId worker) const noexcept {
  return ((rank(worker) + 1) * tensor_parallel_ - 1) / gpus_per_node_;
}

bool Cluster::same_node(WorkerId a, WorkerId b) const noexcept {
  const std::int64_t node = first_node(a);
  return last_node(a) == node && first_node(b) == node && last_node(b) == node;
}

const Link& Cluster::link(WorkerId a, WorkerId b) const noexcept {
  return same_node(a, b) ? intra_ : inter_;
}

Nanos Cluster::transfer_time(WorkerId from, WorkerId to, Bytes bytes) const noexcept {
  if (free_) return 0;
  return link(from, to).transfer_time(bytes);
}

Nanos Cluster::least_transfer_time(std::span<const WorkerId> from, std::span<const WorkerId> to,
                                   Bytes bytes) const {
  if (free_ || from.empty() || to.empty()) return 0;
  // Two links only: a pair inside one node uses intra_, any other pair inter_. The nodes that
  // hold a whole worker of `from`, then whether a worker of `to` lies wholly on one of them.
  std::vector<std::int64_t> nodes;
  bool spans = false;  // some worker of `from` does not lie on one node
  for (const WorkerId& w : from) {
    if (first_node(w) == last_node(w)) {
      nodes.push_back(first_node(w));
    } else {
      spans = true;
    }
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  bool intra = false, inter = spans || nodes.size() > 1;
  for (const WorkerId& w : to) {
    const bool whole = first_node(w) == last_node(w);
    const bool shared = whole && std::binary_search(nodes.begin(), nodes.end(), first_node(w));
    intra = intra || shared;
    inter = inter || !shared || nodes.size() > 1;
  }
  Nanos least = std::numeric_limits<Nanos>::max();
  if (intra) least = std::min(least, intra_.transfer_time(bytes));
  if (inter) least = std::min(least, inter_.transfer_time(bytes));
  return least;
}

Nanos Cluster::all_reduce_time(std::span<const WorkerId> peers, Bytes bytes) const noexcept {
  if (!all_reduce_times_.empty() && !peers.empty()) {
    const auto stage = static_cast<std::size_t>(peers.front().stage);
    if (stage < all_reduce_times_.size()) return all_reduce_times_[stage];
  }
  const auto n = static_cast<std::int32_t>(peers.size()) + absent_ring_peers_;
  if (free_ || n <= 1 || peers.empty()) return 0;
  bool one_node = absent_ring_peers_ == 0;
  for (const WorkerId& p : peers) one_node = one_node && same_node(peers.front(), p);
  if (bus_bandwidth_ > 0) {
    return ring_all_reduce_time(n, bytes,
                                Link{bus_bandwidth_, (one_node ? intra_ : inter_).latency});
  }
  if (one_node) return ring_all_reduce_time(n, bytes, intra_);
  // Peers per node, counted on the nodes where peers start (peers are sorted by rank in no
  // particular order, so count them all); the fewest sets the ring's side-by-side count.
  std::vector<std::int64_t> nodes;
  nodes.reserve(peers.size());
  for (const WorkerId& p : peers) nodes.push_back(first_node(p));
  std::sort(nodes.begin(), nodes.end());
  std::int64_t fewest = static_cast<std::int64_t>(peers.size());
  for (std::size_t i = 0; i < nodes.size();) {
    std::size_t j = i;
    while (j < nodes.size() && nodes[j] == nodes[i]) ++j;
    fewest = std::min<std::int64_t>(fewest, static_cast<std::int64_t>(j - i));
    i = j;
  }
  Link ring = inter_;
  if (ring.bandwidth > 0) ring.bandwidth *= static_cast<double>(fewest);
  return ring_all_reduce_time(n, bytes, ring);
}

}  // namespace recycle::planner
