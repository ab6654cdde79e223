// Workers sharing processors (sim/shared_cores.hpp): with a core per worker, the simulator's
// iteration ends; with workers sharing cores, hand-worked processor sharing.
#include "sim/shared_cores.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "planner/generators.hpp"
#include "planner/language/lower.hpp"
#include "planner/recycle_planner.hpp"
#include "sim/simulator.hpp"

namespace {

using namespace recycle;
using planner::CostModel;
using planner::Layout;

CostModel uniform(const Layout& layout, Nanos f, Nanos i, Nanos w) {
  return CostModel::compute_only(
      planner::Costs::uniform(layout.virtual_stages(), planner::StageCost{f, i, w}));
}

planner::Schedule fault_free(const std::string& name, const Layout& layout, const CostModel& m) {
  planner::GeneratorOptions gen;
  gen.layout = layout;
  gen.model = m;
  return planner::generate_fault_free(name, gen);
}

/// Worker w of the list on core w % cores.
std::vector<Nanos> ends(const planner::Schedule& s, const CostModel& m, std::int32_t cores,
                        std::int32_t iterations, const std::vector<double>& throughput = {}) {
  planner::GraphOptions options;
  options.network = planner::Network::kDirect;
  options.staggered_optimizer = s.staggered_optimizer;
  std::vector<std::int32_t> core_of;
  for (std::size_t w = 0; w < s.workers.size(); ++w)
    core_of.push_back(static_cast<std::int32_t>(w) % cores);
  const auto got = sim::shared_core_iteration_ends(s, m, options, core_of, iterations, throughput);
  REQUIRE(got.has_value());
  return *got;
}

}  // namespace

TEST_CASE("shared cores: with a core for every worker, the simulator's iteration ends") {
  // A network that charges transfers (each stage on its own node), so that delays matter too.
  profiles::HardwareSpec hw;
  hw.gpus_per_node = 1;
  hw.intra_node_bandwidth = hw.inter_node_bandwidth = 1e9;
  hw.intra_node_latency = hw.inter_node_latency = 7;
  const Layout layout{2, 4, 8, 1};
  CostModel model = uniform(layout, 30, 40, 20);
  model.cluster = planner::Cluster(hw, 1, layout.pp);
  model.output_bytes.assign(static_cast<std::size_t>(layout.pp), 5'000);
  std::vector<planner::Schedule> schedules = {fault_free("1f1b", layout, model),
                                              fault_free("zb-h1", layout, model),
                                              fault_free("gpipe", layout, model)};
  planner::RecycleOptions rc;
  rc.layout = layout;
  rc.failed = {{1, 2}};
  rc.model = model;
  rc.run.network = planner::Network::kDirect;
  schedules.push_back(planner::plan_recycle(rc).schedule);
  for (const planner::Schedule& s : schedules) {
    CAPTURE(s.generator);
    sim::SimOptions options;
    options.iterations = 5;
    options.network = planner::Network::kDirect;
    options.staggered_optimizer = s.staggered_optimizer;
    const sim::SimRun run = sim::simulate(s, model, options);
    CHECK(ends(s, model, static_cast<std::int32_t>(s.workers.size()), 5) ==
          run.timeline.iteration_ends);
  }
}

TEST_CASE("shared cores: independent workers on fewer cores, by hand") {
  // PP 1: each worker runs F0 B0 F1 B1 (1 + 2 + 1 + 2 = 6 ns; B = I + W), then an all-reduce
  // and an optimizer step that take no time, so the workers never wait for one another.
  const Layout two{2, 1, 2, 1};
  const CostModel m2 = uniform(two, 1, 1, 1);
  const planner::Schedule s2 = fault_free("1f1b", two, m2);
  CHECK(ends(s2, m2, 2, 3) == std::vector<Nanos>{6, 12, 18});   // a core each
  CHECK(ends(s2, m2, 1, 3) == std::vector<Nanos>{12, 24, 36});  // each at half speed
  // Three workers on two cores: workers 0 and 2 share core 0 (12 ns each), worker 1 has core 1
  // (6 ns); the next iteration starts after the barrier of every OPT.
  const Layout three{3, 1, 2, 1};
  const CostModel m3 = uniform(three, 1, 1, 1);
  CHECK(ends(fault_free("1f1b", three, m3), m3, 2, 2) == std::vector<Nanos>{12, 24});
}

TEST_CASE("shared cores: a pipeline on one core takes the sum of its work") {
  // PP 2, M 2, GPipe, F = 3, B = I + W = 5 + 2: one core runs everything one action at a time or
  // shares it, and never idles while work is ready; stage 1's F0 can only start after stage 0's
  // F0, and stage 0's B1 only after stage 1's B1, but something is always ready: 2 x 2 x (3 + 7)
  // = 40 ns per iteration, both iterations (the next starts after every OPT: barrier).
  const Layout layout{1, 2, 2, 1};
  const CostModel m = uniform(layout, 3, 5, 2);
  const auto got = ends(fault_free("gpipe", layout, m), m, 1, 2);
  CHECK(got == std::vector<Nanos>{40, 80});
}

TEST_CASE("shared cores: an all-reduce is a share of work on each taker's core") {
  // PP 1, DP 2, each worker F0 B0 F1 B1 = 6 ns as above, then the stage's all-reduce: 4 bytes of
  // gradients at a bus bandwidth of 1 byte per ns over 2 peers, no latency: 2 x 1/2 x 4 = 4 ns.
  // The cpu backend's ranks each do their share of the sum on their own thread, so the 4 ns are
  // work on each taker's core.
  profiles::HardwareSpec hw;
  hw.gpus_per_node = 2;
  hw.intra_node_bandwidth = hw.inter_node_bandwidth = 1e18;
  hw.all_reduce_bus_bandwidth = 1e9;
  const Layout two{2, 1, 2, 1};
  CostModel m = uniform(two, 1, 1, 1);
  m.cluster = planner::Cluster(hw, 1, two.pp);
  m.param_bytes = {4};
  const planner::Schedule s = fault_free("1f1b", two, m);
  // A core each: 6 + 4 per iteration.
  CHECK(ends(s, m, 2, 3) == std::vector<Nanos>{10, 20, 30});
  // One core: both workers' compute at half speed (12 ns), then both shares of the all-reduce
  // on the same core (8 ns): 20 per iteration, not the 16 of an all-reduce taking no core.
  CHECK(ends(s, m, 1, 3) == std::vector<Nanos>{20, 40, 60});
}

TEST_CASE("shared cores: a unit whose throughput grows with the actions on it (a shared GPU)") {
  // PP 1, DP 2 on one unit, each worker F0 B0 F1 B1 = 6 ns of work (F = I = W = 1 ns, no
  // all-reduce time). With 1.5 times the throughput when two run, each runs at 1.5 / 2 = 0.75 of
  // its speed alone: both finish their 6 ns of work together, after 6 / 0.75 = 8 ns.
  const Layout two{2, 1, 2, 1};
  const CostModel m = uniform(two, 1, 1, 1);
  const planner::Schedule s = fault_free("1f1b", two, m);
  CHECK(ends(s, m, 1, 3, {1.0, 1.5}) == std::vector<Nanos>{8, 16, 24});
  // Past the list's end its last entry holds: three workers at 1.5 / 3 = 0.5 each, 12 ns.
  const Layout three{3, 1, 2, 1};
  const CostModel m3 = uniform(three, 1, 1, 1);
  CHECK(ends(fault_free("1f1b", three, m3), m3, 1, 2, {1.0, 1.5}) == std::vector<Nanos>{12, 24});
  // GPipe, PP 2, M 2 on one unit (F = 3, B = I + W = 5 + 2 fused; each stage F0 F1 B0 B1), at
  // 1.2 / 2 = 0.6 each while two run. By hand:
  //   0-3 s0.F0 alone; 3-8 s0.F1 with s1.F0 (3 ns of work in 5); 8-11 s1.F1; 11-18 s1.B0;
  //   18-29.67 s0.B0 with s1.B1 (7 in 7 / 0.6); 29.67-36.67 s0.B1 alone:
  // 36.67 ns per iteration (37, then 73.33 -> 73 rounded), where even sharing takes all 40.
  const Layout gp{1, 2, 2, 1};
  const CostModel mg = uniform(gp, 3, 5, 2);
  CHECK(ends(fault_free("gpipe", gp, mg), mg, 1, 2, {1.0, 1.2}) == std::vector<Nanos>{37, 73});
}
