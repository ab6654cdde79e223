// Mapping a trace onto a cluster of another size: wrap, sample and scale.
#include "traces/mapping.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/error.hpp"
#include "traces/generator.hpp"
#include "traces/stats.hpp"

namespace recycle::traces {
namespace {

/// Each node's events as (time, kind, cause) lists.
std::map<NodeId, std::vector<std::tuple<Nanos, EventKind, std::string>>> per_node(const Trace& t) {
  std::map<NodeId, std::vector<std::tuple<Nanos, EventKind, std::string>>> out;
  for (const Event& e : t.events()) out[e.node].emplace_back(e.time, e.kind, t.cause(e.cause));
  return out;
}

Trace small_trace(std::int64_t nodes, double days, std::uint64_t seed) {
  GeneratorOptions o;
  o.nodes = nodes;
  o.days = days;
  o.rate = 20;
  o.repair = RepairModel::parse("exp:24", "--repair");
  o.causes = CauseMix::parse("llama3", "--causes");
  o.seed = seed;
  return generate_trace(o);
}

TEST_CASE("wrap: cluster node j replays trace node j mod N") {
  const Trace trace = small_trace(10, 200, 3);
  const auto source = per_node(trace);
  const Trace bigger = map_trace(trace, {MapMode::kWrap, 25, 0});
  CHECK(bigger.node_count() == 25);
  CHECK(bigger.duration() == trace.duration());
  const auto mapped = per_node(bigger);
  for (NodeId j = 0; j < 25; ++j) {
    CAPTURE(j);
    const auto it = source.find(j % 10);
    CHECK(mapped.contains(j) == (it != source.end()));
    if (it != source.end()) CHECK(mapped.at(j) == it->second);
  }
  // Nodes 0-9 and 10-19 replay the whole trace, 20-24 replay trace nodes 0-4.
  std::size_t first_five = 0;
  for (NodeId i = 0; i < 5; ++i) first_five += source.contains(i) ? source.at(i).size() : 0;
  CHECK(bigger.events().size() == 2 * trace.events().size() + first_five);
  const auto smaller = per_node(map_trace(trace, {MapMode::kWrap, 4, 0}));
  for (const auto& [node, events] : smaller) CHECK(events == source.at(node));
}

TEST_CASE("sample: distinct trace nodes while M <= N, each used floor or ceil(M/N) times above") {
  const Trace trace = small_trace(10, 400, 4);
  const auto source = per_node(trace);
  REQUIRE(source.size() == 10);  // at rate 20 / 1,000 node-days over 400 days, every node fails
  const auto find_source =
      [&](const std::vector<std::tuple<Nanos, EventKind, std::string>>& events) {
        for (const auto& [node, list] : source) {
          if (list == events) return static_cast<int>(node);
        }
        return -1;
      };
  const auto seven = per_node(map_trace(trace, {MapMode::kSample, 7, 9}));
  std::set<int> used;
  for (const auto& [node, events] : seven) used.insert(find_source(events));
  CHECK(used.size() == 7);
  CHECK_FALSE(used.contains(-1));
  const auto twenty_five = per_node(map_trace(trace, {MapMode::kSample, 25, 9}));
  std::map<int, int> uses;
  for (const auto& [node, events] : twenty_five) ++uses[find_source(events)];
  CHECK_FALSE(uses.contains(-1));
  for (const auto& [node, count] : uses) CHECK((count == 2 || count == 3));
  // Seeded: the same seed maps the same way.
  CHECK(map_trace(trace, {MapMode::kSample, 7, 9}).events() ==
        map_trace(trace, {MapMode::kSample, 7, 9}).events());
}

TEST_CASE("scale: the cluster-wide pattern and the repair times, M/N times over") {
  const Trace trace = small_trace(100, 365, 5);
  const std::vector<Outage> before = outages(trace);
  // Doubling: every outage twice, same times, causes and lengths.
  const Trace doubled = map_trace(trace, {MapMode::kScale, 200, 1});
  const std::vector<Outage> after = outages(doubled);
  REQUIRE(after.size() == 2 * before.size());
  std::multiset<std::tuple<Nanos, Nanos, std::string>> want, got;
  for (const Outage& o : before) {
    want.emplace(o.down, o.up, trace.cause(o.cause));
    want.emplace(o.down, o.up, trace.cause(o.cause));
  }
  for (const Outage& o : after) got.emplace(o.down, o.up, doubled.cause(o.cause));
  CHECK(got == want);
  const TraceStats a = compute_stats(trace);
  const TraceStats b = compute_stats(doubled);
  CHECK(*b.failures_per_1000_node_days == doctest::Approx(*a.failures_per_1000_node_days));
  // Halving keeps each outage with probability 1/2: ~365 of ~730, standard deviation ~14.
  const Trace halved = map_trace(trace, {MapMode::kScale, 50, 1});
  const double kept =
      static_cast<double>(outages(halved).size()) / static_cast<double>(before.size());
  CHECK(kept == doctest::Approx(0.5).epsilon(0.15));
}

TEST_CASE("mapping refuses a bad cluster size and a trace without nodes") {
  const Trace trace = small_trace(10, 10, 1);
  CHECK_THROWS_WITH_AS((void)map_trace(trace, {MapMode::kWrap, 0, 0}),
                       "--cluster: must be in [1, 16777216], got 0", InputError);
  CHECK_THROWS_WITH_AS((void)parse_map_mode("fold", "--map"),
                       "--map: unknown mapping 'fold', expected wrap, sample or scale", InputError);
}

}  // namespace
}  // namespace recycle::traces
