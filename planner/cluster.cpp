#include "planner/cluster.hpp"

namespace recycle::planner {

Nanos Link::transfer_time(Bytes bytes) const noexcept {
  const Nanos wire = bandwidth > 0 ? to_nanos(static_cast<double>(bytes) / bandwidth) : 0;
  return latency + wire;
}

Nanos ring_all_reduce_time(std::int32_t peers, Bytes bytes, const Link& link) noexcept {
  if (peers <= 1) return 0;
  const double n = peers;
  const Nanos wire = link.bandwidth > 0
                         ? to_nanos(2.0 * (n - 1) / n * static_cast<double>(bytes) / link.bandwidth)
                         : 0;
  return wire + 2 * static_cast<Nanos>(peers - 1) * link.latency;
}

Cluster::Cluster(const profiles::HardwareSpec& hardware, std::int32_t tensor_parallel,
                 std::int32_t pp)
    : free_(false),
      pp_(pp),
      gpus_per_node_(hardware.gpus_per_node),
      tensor_parallel_(tensor_parallel),
      intra_{hardware.intra_node_bandwidth, hardware.intra_node_latency},
      inter_{hardware.inter_node_bandwidth, hardware.inter_node_latency} {}

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

Nanos Cluster::all_reduce_time(std::span<const WorkerId> peers, Bytes bytes) const noexcept {
  if (free_ || peers.size() <= 1) return 0;
  bool one_node = true;
  for (const WorkerId& p : peers) one_node = one_node && same_node(peers.front(), p);
  return ring_all_reduce_time(static_cast<std::int32_t>(peers.size()), bytes,
                              one_node ? intra_ : inter_);
}

}  // namespace recycle::planner
