// A trace file on a job's cluster (sim/replay/trace_on_cluster.hpp): the rule study and configure
// under failures share, by hand.
#include "sim/replay/trace_on_cluster.hpp"

#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "traces/native_csv.hpp"

namespace {

using namespace recycle;

/// 4 nodes watched for 10 days; node 2 down on day 1 for an hour.
traces::Trace four_nodes() {
  return traces::parse_native_csv(
             "# nodes: 4\n# duration_s: "
             "864000\ntime_s,node,event,cause\n86400,2,down,x\n90000,2,up,\n",
             "trace.csv", {})
      .trace;
}

}  // namespace

TEST_CASE("a trace file on a cluster: as it is on its own node count, else mapped or refused") {
  const traces::Trace t = four_nodes();
  CHECK(sim::trace_on_cluster(t, std::nullopt, 4, "point 0").node_count() == 4);
  try {
    static_cast<void>(sim::trace_on_cluster(t, std::nullopt, 8, "point 3 (rate=4)"));
    FAIL("a trace of 4 nodes on 8 without --map was replayed");
  } catch (const InputError& e) {
    CHECK(e.where() == "--trace");
    CHECK(e.problem() ==
          "point 3 (rate=4): the trace watched 4 nodes and the cluster has 8; --map says how to "
          "replay it");
  }
  traces::MapOptions wrap;
  wrap.mode = traces::MapMode::kWrap;
  wrap.nodes = 2;  // replaced by the cluster's
  CHECK(sim::trace_on_cluster(t, wrap, 8, "point 0").node_count() == 8);
}

TEST_CASE("how much of a trace a replay covers") {
  const traces::Trace t = four_nodes();
  CHECK(sim::replay_duration(t, 0) == -1);  // all of it
  CHECK(sim::replay_duration(t, -2) == -1);
  CHECK(sim::replay_duration(t, 3) == traces::seconds_to_trace_time(3 * 86400.0));
  CHECK(sim::replay_duration(t, 30) == t.duration());  // at most the trace
}
