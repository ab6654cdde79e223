// The InfiniteHBD importer: a tiny hand-written file, and facts hand-counted on the real trace.
#include "traces/import_infinitehbd.hpp"

#include <doctest/doctest.h>

#include <set>

#include "core/error.hpp"
#include "tests/traces/test_paths.hpp"

namespace recycle::traces {
namespace {

using testing::data_path;
using testing::shared_trace;
constexpr Nanos kDay = 86'400 * kNanosPerSecond;

TEST_CASE(
    "a tiny InfiniteHBD file: days become seconds, overlapping faults merge into one outage") {
  // Node a: GPU fault from day 1, a stress-test fault from day 1.5 (merged: a is already down), the
  // GPU fault ends at day 2 (a still has one open), the other at day 3 -> a is down [1, 3].
  // Node b: NIC fault [1, 2.25].
  const LoadedTrace loaded = read_infinitehbd(data_path("tiny_infinitehbd.json"), {});
  const Trace& t = loaded.trace;
  REQUIRE(t.events().size() == 4);
  CHECK(t.node_name(t.events()[0].node) == "a");
  CHECK(t.events()[0].time == kDay);
  CHECK(t.cause(t.events()[0].cause) == "Hardware Failure / GPU / GPU Lost");
  CHECK(t.node_name(t.events()[1].node) == "b");
  CHECK(t.cause(t.events()[1].cause) == "Hardware Failure / NIC / NIC Lost");
  CHECK(t.events()[2] == Event{9 * kDay / 4, t.events()[1].node, 0, EventKind::kUp});
  CHECK(t.events()[3] == Event{3 * kDay, t.events()[0].node, 0, EventKind::kUp});
  CHECK(t.node_count() == 2);
  CHECK(t.duration() == 3 * kDay);
  REQUIRE(loaded.notes.size() == 1);
  CHECK(loaded.notes[0].starts_with("1 fault_start events"));
}

TEST_CASE("InfiniteHBD input errors name the element") {
  const std::string path = data_path("bad_event_infinitehbd.json");
  CHECK_THROWS_WITH_AS(
      read_infinitehbd(path, {}),
      (path + ": [0].event_type: unknown event_type 'fault_begin', expected fault_start or "
              "fault_end")
          .c_str(),
      InputError);
  CHECK_THROWS_WITH_AS(parse_infinitehbd("{}", "x.json", {}),
                       "x.json: expected an array, got an object", InputError);
  CHECK_THROWS_WITH_AS(
      parse_infinitehbd("[{\"node_id\": \"a\", \"event_time\": 1, \"event_type\": \"fault_end\", "
                        "\"fault_type\": {\"Level\": \"L\", \"Class\": \"C\", \"Desc\": \"D\"}}]",
                        "x.json", {}),
      "x.json: [0]: node 'a' comes up but is not down (use --lenient to drop such events)",
      InputError);
}

TEST_CASE("a node or cause a native file cannot hold is refused naming the record") {
  const auto parse = [](const std::string& node, const std::string& cls) {
    return parse_infinitehbd(
        "[{\"node_id\": \"a\", \"event_time\": 1, \"event_type\": \"fault_end\", "
        "\"fault_type\": {\"Level\": \"L\", \"Class\": \"C\", \"Desc\": \"D\"}},"
        "{\"node_id\": \"" +
            node +
            "\", \"event_time\": 1, \"event_type\": \"fault_start\", "
            "\"fault_type\": {\"Level\": \"L\", \"Class\": \"" +
            cls + "\", \"Desc\": \"D\"}}]",
        "x.json", {.lenient = true});
  };
  CHECK_THROWS_WITH_AS(parse("a", "C\\n"),
                       "x.json: [1].fault_type: cause 'L / C\\x0A / D' is blank or holds a control "
                       "character, so a trace naming it would not read back",
                       InputError);
  CHECK_THROWS_WITH_AS(parse("a\\nb", "C"),
                       "x.json: [1].node_id: node 'a\\x0Ab' is blank or holds a control character, "
                       "so a trace naming it would not read back",
                       InputError);
  CHECK_THROWS_WITH_AS(parse("  ", "C"),
                       "x.json: [1].node_id: node '  ' is blank or holds a control character, so a "
                       "trace naming it would not read back",
                       InputError);
}

TEST_CASE("the StepFun InfiniteHBD trace: hand-counted facts") {
  const auto path = shared_trace("infinitehbd-stepfun/fault_trace.json");
  if (!path) return testing::skip_without_trace("infinitehbd-stepfun/fault_trace.json");
  // Counted with python (json.load; collections.Counter):
  //  - 1168 records, 584 fault_start and 584 fault_end, 231 distinct node_id;
  //  - walking the records with an open-fault counter per node, 2 fault_start records (both on node
  //    d0aff1b6-..., at days 249.2998 and 271.244) fall inside an outage already under way, so
  //    there are 582 outages, each ended: 582 downs + 582 ups = 1164 events;
  //  - event_time runs from 3.8955 to 348.9798 days (the last event ends the observation).
  const LoadedTrace loaded = read_infinitehbd(*path, {.nodes = 400});
  const Trace& t = loaded.trace;
  CHECK(t.events().size() == 1164);
  std::int64_t downs = 0;
  std::set<NodeId> nodes;
  for (const Event& e : t.events()) {
    downs += e.kind == EventKind::kDown ? 1 : 0;
    nodes.insert(e.node);
  }
  CHECK(downs == 582);
  CHECK(nodes.size() == 231);
  CHECK(t.node_count() == 400);  // declared: the README's 400 servers
  CHECK(t.events().front().time == seconds_to_trace_time(3.8955 * 86'400));
  CHECK(t.events().back().time == seconds_to_trace_time(348.9798 * 86'400));
  CHECK(t.duration() == t.events().back().time);
  REQUIRE(loaded.notes.size() == 1);
  CHECK(loaded.notes[0].starts_with("2 fault_start events"));
  CHECK(loaded.repairs.total() == 0);
}

}  // namespace
}  // namespace recycle::traces
