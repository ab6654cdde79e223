// The Bamboo importer: instances packed into slots; a tiny hand-worked file, and facts hand-counted
// on the published spot traces.
#include "traces/import_bamboo.hpp"

#include <doctest/doctest.h>

#include "core/error.hpp"
#include "tests/traces/test_paths.hpp"

namespace recycle::traces {
namespace {

using testing::data_path;
using testing::shared_trace;
constexpr Nanos kSecond = kNanosPerSecond;
constexpr auto kDown = EventKind::kDown;
constexpr auto kUp = EventKind::kUp;

TEST_CASE("a tiny Bamboo file, worked by hand") {
  // t=0: node1 -> slot 0, node2 -> slot 1 (up from the start, no events). 60 s: node3 -> new slot
  // 2, which was down until then. 120 s: node1 preempted (slot 0 down). 180 s: node4 -> lowest free
  // slot 0 (up). 240 s: node3 and node2 preempted (slots 2, 1 down). 300 s: node5 -> slot 1 (up).
  const LoadedTrace loaded = read_bamboo(data_path("tiny_bamboo.csv"), {});
  const Trace& t = loaded.trace;
  REQUIRE(t.events().size() == 7);
  const auto at = [&](std::size_t i) {
    return std::tuple(t.events()[i].time, t.events()[i].node, t.events()[i].kind);
  };
  CHECK(at(0) == std::tuple(0, 2u, kDown));
  CHECK(t.cause(t.events()[0].cause) == "spot capacity not yet obtained");
  CHECK(at(1) == std::tuple(60 * kSecond, 2u, kUp));
  CHECK(at(2) == std::tuple(120 * kSecond, 0u, kDown));
  CHECK(t.cause(t.events()[2].cause) == "spot preemption");
  CHECK(at(3) == std::tuple(180 * kSecond, 0u, kUp));
  CHECK(at(4) == std::tuple(240 * kSecond, 2u, kDown));
  CHECK(at(5) == std::tuple(240 * kSecond, 1u, kDown));
  CHECK(at(6) == std::tuple(300 * kSecond, 1u, kUp));
  CHECK(t.node_count() == 3);
  CHECK(t.duration() == 300 * kSecond);
}

TEST_CASE("Bamboo input errors name the line") {
  const std::string path = data_path("bad_bamboo.csv");
  CHECK_THROWS_WITH_AS(
      read_bamboo(path, {}),
      (path + ":3: time goes backwards: 30000 ms after 60000 ms (rows must be sorted)").c_str(),
      InputError);
  CHECK_THROWS_WITH_AS(
      parse_bamboo("0,add,n1\n5,add,n1\n", "b.csv", {}),
      "b.csv:2: instance 'n1' is added while it is running (use --lenient to drop such rows)",
      InputError);
  CHECK_THROWS_WITH_AS(
      parse_bamboo("0,remove,n1\n", "b.csv", {}),
      "b.csv:1: instance 'n1' is removed but is not running (use --lenient to drop such rows)",
      InputError);
  CHECK_THROWS_WITH_AS(parse_bamboo("0,add\n", "b.csv", {}),
                       "b.csv:1: expected 3 columns (delta_ms,add|remove,name), got 2", InputError);
  CHECK_THROWS_WITH_AS(parse_bamboo("0,join,n1\n", "b.csv", {}),
                       "b.csv:1: unknown event 'join', expected add or remove", InputError);
  CHECK_THROWS_WITH_AS(parse_bamboo("", "b.csv", {}),
                       "b.csv:1: empty file, expected delta_ms,add|remove,name rows", InputError);
  const LoadedTrace lenient =
      parse_bamboo("0,add,n1\n5,add,n1\n9,remove,n2\n", "b.csv", {.lenient = true});
  CHECK(lenient.repairs.up_without_down == 1);
  CHECK(lenient.repairs.repeated_down == 1);
}

struct SpotFacts {
  const char* file;
  std::size_t adds, removes, adds_at_zero, max_live, live_at_end;
  Nanos last;
};

TEST_CASE("the Bamboo spot traces: hand-counted facts") {
  // Counted with awk -F, (rows, $2 == "add" / "remove", adds with $1 == 0, the running count of
  // live instances and its maximum, and the last $1):
  //   p3-trace.csv:   344 rows, 177 adds (18 at 0 ms), 167 removes, at most 32 live, 10 live at the
  //   end, last 40,920,000 ms g4dn-trace.csv: 153 rows,  79 adds (none at 0), 74 removes, at most
  //   24 live, 5 live at the end, last 38,760,000 ms
  // So: nodes = most live; failures = removes; slots not filled at 0 start down; every add after
  // 0 is an up; nodes down at the end = slots - live at the end.
  for (const SpotFacts& f : {SpotFacts{"p3-trace.csv", 177, 167, 18, 32, 10, 40'920 * kSecond},
                             SpotFacts{"g4dn-trace.csv", 79, 74, 0, 24, 5, 38'760 * kSecond}}) {
    CAPTURE(f.file);
    const std::string file = std::string("bamboo-spot/") + f.file;
    const auto path = shared_trace(file);
    if (!path) return testing::skip_without_trace(file);
    const Trace t = read_bamboo(*path, {}).trace;
    std::size_t initial = 0, failures = 0, ups = 0;
    for (const Event& e : t.events()) {
      if (e.kind == kUp)
        ++ups;
      else if (e.time == 0)
        ++initial;
      else
        ++failures;
    }
    CHECK(static_cast<std::size_t>(t.node_count()) == f.max_live);
    CHECK(failures == f.removes);
    CHECK(initial == f.max_live - f.adds_at_zero);
    CHECK(ups == f.adds - f.adds_at_zero);
    CHECK(initial + failures - ups == f.max_live - f.live_at_end);
    CHECK(t.duration() == f.last);
  }
}

}  // namespace
}  // namespace recycle::traces
