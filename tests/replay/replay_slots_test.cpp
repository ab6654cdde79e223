// The spare pool's bit set against a balanced tree of the same operations, and the job's slots on
// a cluster far larger than the job.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>

#include "sim/replay/replay_slots.hpp"

using recycle::sim::JobSlots;
using recycle::sim::NodePool;

TEST_CASE("NodePool: the same members and the same lowest as a std::set under random operations") {
  for (const auto& [size, first, last] :
       {std::tuple{1, 0, 1}, std::tuple{64, 0, 64}, std::tuple{65, 1, 65}, std::tuple{300, 70, 200},
        std::tuple{1000, 1000, 1000}}) {
    NodePool pool(size, first, last);
    std::set<std::int64_t> reference;
    for (std::int64_t n = first; n < last; ++n) reference.insert(n);
    std::uint64_t state = 7;
    for (int step = 0; step < 5000; ++step) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      const auto node = static_cast<std::int64_t>((state >> 33) % static_cast<std::uint64_t>(size));
      switch ((state >> 20) % 3) {
        case 0:
          pool.insert(node);
          reference.insert(node);
          break;
        case 1:
          CHECK(pool.erase(node) == (reference.erase(node) == 1));
          break;
        default:
          if (!reference.empty()) {
            CHECK(pool.lowest() == *reference.begin());
            CHECK(pool.erase(*reference.begin()));
            reference.erase(reference.begin());
          }
      }
      REQUIRE(pool.size() == static_cast<std::int64_t>(reference.size()));
      CHECK(pool.contains(node) == reference.contains(node));
      if (!reference.empty()) CHECK(pool.lowest() == *reference.begin());
    }
  }
}

TEST_CASE("JobSlots: a failed node's slot is filled by the lowest spare of a 2^24-node cluster") {
  // PP 4 x DP 2, one GPU a node: 8 slots, nodes 8..2^24-1 spare.
  recycle::planner::Layout layout;
  layout.pp = 4;
  layout.dp = 2;
  const std::int64_t cluster = std::int64_t{1} << 24;
  JobSlots slots(8, cluster, layout, 1, 1);
  CHECK(slots.spares() == cluster - 8);
  CHECK(slots.node_down(3) == 3);
  CHECK(slots.node_down(9) == -1);  // a spare fails: it leaves the pool
  CHECK(slots.spares() == cluster - 9);
  CHECK(slots.fill_from_spares() == std::vector<std::int64_t>{3});  // by node 8
  CHECK(slots.node_down(8) == 3);
  slots.node_ready(3);  // node 3 is back and joins the pool, below every other spare
  CHECK(slots.fill_from_spares() == std::vector<std::int64_t>{3});
  CHECK(slots.node_down(3) == 3);
  CHECK(slots.full() == false);
  // Regrouping with every node live keeps both pipelines and fills the slot from node 10.
  slots.regroup();
  CHECK(slots.active_pipelines() == 2);
  CHECK(slots.full());
  CHECK(slots.spares() == cluster - 8 - 3);  // nodes 3, 8 and 9 are down
}
