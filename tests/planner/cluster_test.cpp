// Placement of workers on nodes, and the cost formulas of sends and all-reduces.
#include <doctest/doctest.h>

#include <vector>

#include "planner/timing/cluster.hpp"

using recycle::Nanos;
using recycle::planner::Cluster;
using recycle::planner::Link;
using recycle::planner::WorkerId;

namespace {

recycle::profiles::HardwareSpec hardware(std::int32_t gpus_per_node) {
  recycle::profiles::HardwareSpec hw;
  hw.gpus_per_node = gpus_per_node;
  hw.intra_node_bandwidth = 1e9;  // 1 byte per ns
  hw.inter_node_bandwidth = 1e8;  // 0.1 byte per ns
  hw.intra_node_latency = 10;
  hw.inter_node_latency = 100;
  return hw;
}

}  // namespace

TEST_CASE("workers are placed by global rank dp * pp + stage, TP GPUs each") {
  // pp 3, TP 3, 8 GPUs per node: rank r holds GPUs 3r .. 3r + 2.
  const Cluster c(hardware(8), 3, 3);
  CHECK(c.first_node({0, 0}) == 0);  // GPUs 0-2
  CHECK(c.last_node({0, 0}) == 0);
  CHECK(c.first_node({0, 2}) == 0);  // rank 2: GPUs 6-8, spans nodes 0 and 1
  CHECK(c.last_node({0, 2}) == 1);
  CHECK(c.first_node({1, 0}) == 1);          // rank 3: GPUs 9-11
  CHECK(c.same_node({0, 0}, {0, 1}));        // GPUs 0-2 and 3-5
  CHECK_FALSE(c.same_node({0, 1}, {0, 2}));  // a worker spanning nodes is inter-node with everyone
  CHECK_FALSE(c.same_node({0, 2}, {0, 2}));
  CHECK_FALSE(c.same_node({0, 0}, {1, 0}));
}

TEST_CASE("a transfer takes latency + bytes / bandwidth of its link") {
  const Cluster c(hardware(8), 4, 4);                              // two workers per node
  CHECK(c.transfer_time({0, 0}, {0, 1}, 1000) == 10 + 1000);       // GPUs 0-3 and 4-7: node 0
  CHECK(c.transfer_time({0, 1}, {0, 2}, 1000) == 100 + 10'000);    // node 0 to node 1
  CHECK(Link{3e9, 0}.transfer_time(1000) == 333);                  // 333.3 ns rounds to 333
  CHECK(Link{0, 7}.transfer_time(1'000'000) == 7);                 // bandwidth <= 0: infinite
  CHECK(Cluster().transfer_time({0, 0}, {0, 1}, 1'000'000) == 0);  // the free network
}

TEST_CASE("the least transfer between two sets of workers: the cheaper link some pair uses") {
  // pp 4, TP 4, 8-GPU nodes: two workers a node, rank r = dp * 4 + stage on node r / 2.
  const Cluster c(hardware(8), 4, 4);
  const std::vector<WorkerId> stage0{{0, 0}, {1, 0}};  // ranks 0 and 4: nodes 0 and 2
  const std::vector<WorkerId> stage1{{0, 1}, {1, 1}};  // ranks 1 and 5: nodes 0 and 2
  const std::vector<WorkerId> stage2{{0, 2}, {1, 2}};  // ranks 2 and 6: nodes 1 and 3
  // (0,0) and (0,1) share node 0: the intra-node link, 10 ns + 1000 bytes at 1 byte/ns.
  CHECK(c.least_transfer_time(stage0, stage1, 1000) == 10 + 1000);
  // No worker of stage 1 shares a node with one of stage 2: 100 ns + 1000 bytes at 0.1 byte/ns.
  CHECK(c.least_transfer_time(stage1, stage2, 1000) == 100 + 10'000);
  // With (0,1) gone, no pair of stages 0 and 1 shares a node either.
  const std::vector<WorkerId> survivor{{1, 1}};
  const std::vector<WorkerId> first{{0, 0}};
  CHECK(c.least_transfer_time(first, survivor, 1000) == 100 + 10'000);
  // Inter-node links made faster than intra-node ones: the pair across nodes is the cheaper.
  recycle::profiles::HardwareSpec odd = hardware(8);
  odd.inter_node_bandwidth = 1e10;  // 10 bytes per ns
  odd.inter_node_latency = 0;
  CHECK(Cluster(odd, 4, 4).least_transfer_time(stage0, stage1, 1000) == 100);
  CHECK(c.least_transfer_time({}, stage1, 1000) == 0);
  CHECK(Cluster().least_transfer_time(stage0, stage1, 1000) == 0);
}

TEST_CASE("a ring all-reduce takes 2(n-1)/n * bytes / bandwidth + 2(n-1) * latency") {
  // n = 4, 1000 bytes at 1 byte/ns: 2 * 3/4 * 1000 = 1500 ns, plus 6 latencies of 10 ns.
  CHECK(recycle::planner::ring_all_reduce_time(4, 1000, Link{1e9, 10}) == 1500 + 60);
  CHECK(recycle::planner::ring_all_reduce_time(2, 1000, Link{1e9, 10}) == 1000 + 20);
  CHECK(recycle::planner::ring_all_reduce_time(1, 1000, Link{1e9, 10}) == 0);
  // Stage 0's peers of pp 2, TP 1: ranks 0, 2, 4, 6. All on one 8-GPU node: intra-node link.
  const std::vector<WorkerId> peers{{0, 0}, {1, 0}, {2, 0}, {3, 0}};
  CHECK(Cluster(hardware(8), 1, 2).all_reduce_time(peers, 1000) == 1500 + 60);
  // On 4-GPU nodes ranks 0, 2 sit on node 0 and 4, 6 on node 1: the ring crosses nodes, two
  // rings side by side, each at 0.1 byte/ns: 1500 ns of wire at 0.2 byte/ns = 7500 ns.
  CHECK(Cluster(hardware(4), 1, 2).all_reduce_time(peers, 1000) == 7'500 + 600);
  // pp 4 on 4-GPU nodes: stage 0's peers are ranks 0, 4, 8, 12, one per node: one ring.
  const std::vector<WorkerId> spread{{0, 0}, {1, 0}, {2, 0}, {3, 0}};
  CHECK(Cluster(hardware(4), 1, 4).all_reduce_time(spread, 1000) == 15'000 + 600);
}

TEST_CASE("a measured all-reduce bus bandwidth replaces the links' in the ring formula") {
  recycle::profiles::HardwareSpec hw = hardware(4);
  hw.all_reduce_bus_bandwidth = 4e9;  // 4 bytes per ns
  const std::vector<WorkerId> peers{{0, 0}, {1, 0}, {2, 0}, {3, 0}};
  // One node (8 GPUs, pp 2): 2 * 3/4 * 1000 bytes at 4 bytes/ns = 375 ns, plus 6 intra-node
  // latencies of 10 ns.
  hw.gpus_per_node = 8;
  CHECK(Cluster(hw, 1, 2).all_reduce_time(peers, 1000) == 375 + 60);
  // Across two 4-GPU nodes: the same 375 ns (the bus bandwidth is the whole ring's, not a
  // link's), plus 6 inter-node latencies of 100 ns.
  hw.gpus_per_node = 4;
  CHECK(Cluster(hw, 1, 2).all_reduce_time(peers, 1000) == 375 + 600);
  // Two peers: 2 * 1/2 * 1000 / 4 = 250 ns plus 2 latencies; one peer: nothing to reduce.
  hw.gpus_per_node = 8;
  const std::vector<WorkerId> two{{0, 0}, {1, 0}};
  CHECK(Cluster(hw, 1, 2).all_reduce_time(two, 1000) == 250 + 20);
  CHECK(Cluster(hw, 1, 2).all_reduce_time(std::vector<WorkerId>{{0, 0}}, 1000) == 0);
}

TEST_CASE("pipelines are interchangeable on a free network or when each owns whole nodes") {
  CHECK(Cluster().pipelines_interchangeable());
  CHECK(Cluster(hardware(8), 2, 4).pipelines_interchangeable());        // 8 GPUs: one node each
  CHECK(Cluster(hardware(8), 4, 4).pipelines_interchangeable());        // 16 GPUs: two nodes each
  CHECK_FALSE(Cluster(hardware(8), 2, 2).pipelines_interchangeable());  // two pipelines per node
  CHECK_FALSE(Cluster(hardware(8), 2, 3).pipelines_interchangeable());  // straddling nodes
}
