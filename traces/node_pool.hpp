// The nodes of a cluster that are up, for uniform random draws, and the repairs under way. Shared
// by the generator and the `scale` mapping, which both put outages on nodes drawn among those up.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "core/rng.hpp"
#include "core/units.hpp"
#include "traces/trace.hpp"

namespace recycle::traces {

class NodePool {
 public:
  /// Nodes 0 .. nodes-1, all up.
  explicit NodePool(std::int64_t nodes);

  [[nodiscard]] bool any_up() const noexcept { return !up_.empty(); }

  /// Takes a node that is up, uniformly at random; it is down until `until` (-1: for good).
  [[nodiscard]] NodeId take(Rng& rng, Nanos until);

  /// Puts back every node whose repair is done by `time`, soonest first (ties by node), calling
  /// `on_up(repair_time, node)` for each.
  template <typename OnUp>
  void repair_until(Nanos time, OnUp&& on_up) {
    while (!repairs_.empty() && repairs_.top().first <= time) {
      const auto [at, node] = repairs_.top();
      repairs_.pop();
      on_up(at, node);
      up_.push_back(node);
    }
  }

 private:
  using Repair = std::pair<Nanos, NodeId>;
  std::vector<NodeId> up_;  ///< in no particular order, but a deterministic one
  std::priority_queue<Repair, std::vector<Repair>, std::greater<>> repairs_;
};

}  // namespace recycle::traces
