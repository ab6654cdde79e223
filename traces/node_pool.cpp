#include "traces/node_pool.hpp"

#include "core/error.hpp"

namespace recycle::traces {

NodePool::NodePool(std::int64_t nodes) {
  up_.reserve(static_cast<std::size_t>(nodes));
  for (std::int64_t i = 0; i < nodes; ++i) up_.push_back(static_cast<NodeId>(i));
}

NodeId NodePool::take(Rng& rng, Nanos until) {
  RECYCLE_ASSERT(!up_.empty(), "take() from a pool with no node up");
  const auto i = static_cast<std::size_t>(rng.below(up_.size()));
  const NodeId node = up_[i];
  up_[i] = up_.back();
  up_.pop_back();
  if (until >= 0) repairs_.emplace(until, node);
  return node;
}

}  // namespace recycle::traces
