// The event model: the builder's rules, lenient repairs, outages, and how times are written.
#include "traces/trace.hpp"

#include <doctest/doctest.h>

#include "core/error.hpp"

namespace recycle::traces {
namespace {

constexpr Nanos kSecond = kNanosPerSecond;
constexpr auto kDown = EventKind::kDown;
constexpr auto kUp = EventKind::kUp;

TEST_CASE("format_seconds writes whole milliseconds with 3 decimals, else microseconds") {
  CHECK(format_seconds(0) == "0.000");
  CHECK(format_seconds(12 * kSecond + 500'000'000) == "12.500");
  CHECK(format_seconds(1'000) == "0.000001");
  CHECK(format_seconds(31'536'000 * kSecond + 123'000'000) == "31536000.123");
  CHECK(format_seconds(7) == "0.000000007");
}

TEST_CASE("seconds read from a file are rounded to the microsecond") {
  CHECK(seconds_to_trace_time(0.1) == 100'000'000);
  CHECK(seconds_to_trace_time(1.0000004) == 1'000'000'000);
  CHECK(seconds_to_trace_time(1.0000006) == 1'000'001'000);
  // 348.9798 days, the last InfiniteHBD event: 30,151,854.72 s exactly.
  CHECK(seconds_to_trace_time(348.9798 * 86'400) == 30'151'854'720'000'000);
}

TEST_CASE("a builder keeps events in order and works out node count and duration") {
  TraceBuilder builder(TraceBuilder::Naming::kNumbered, false);
  const CauseId gpu = builder.cause("GPU");
  builder.add(10 * kSecond, 2, kDown, gpu, "t", 1);
  builder.add(10 * kSecond, 0, kDown, 0, "t", 2);
  builder.add(20 * kSecond, 2, kUp, 0, "t", 3);
  const LoadedTrace loaded = std::move(builder).finish();
  const Trace& trace = loaded.trace;
  REQUIRE(trace.events().size() == 3);
  CHECK(trace.events()[0] == Event{10 * kSecond, 2, gpu, kDown});
  CHECK(trace.events()[1] == Event{10 * kSecond, 0, 0, kDown});
  CHECK(trace.node_count() == 3);  // ids 0..2
  CHECK(trace.duration() == 20 * kSecond);
  CHECK(trace.cause(gpu) == "GPU");
  CHECK(trace.node_name(2) == "2");
  CHECK(loaded.repairs.total() == 0);
}

TEST_CASE("the builder refuses time going backwards, an up without a down, and a second down") {
  SUBCASE("backwards") {
    TraceBuilder builder(TraceBuilder::Naming::kNumbered, true);
    builder.add(10 * kSecond, 0, kDown, 0, "f.csv", 2);
    CHECK_THROWS_WITH_AS(
        builder.add(5 * kSecond, 1, kDown, 0, "f.csv", 3),
        "f.csv:3: time goes backwards: 5.000 s after 10.000 s (events must be sorted by time)",
        InputError);
  }
  SUBCASE("up without down") {
    TraceBuilder builder(TraceBuilder::Naming::kNamed, false);
    const NodeId a = builder.named_node("a");
    CHECK_THROWS_WITH_AS(
        builder.add(kSecond, a, kUp, 0, "f.csv", 7),
        "f.csv:7: node 'a' comes up but is not down (use --lenient to drop such events)",
        InputError);
  }
  SUBCASE("second down") {
    TraceBuilder builder(TraceBuilder::Naming::kNumbered, false);
    builder.add(kSecond, 4, kDown, 0, "f.csv", 2);
    CHECK_THROWS_WITH_AS(
        builder.add(2 * kSecond, 4, kDown, 0, "f.csv", 3),
        "f.csv:3: node 4 goes down again without coming up since 1.000 s (use --lenient to "
        "drop such events)",
        InputError);
  }
}

TEST_CASE("lenient, the builder drops what breaks the alternation and counts it") {
  TraceBuilder builder(TraceBuilder::Naming::kNumbered, true);
  builder.add(1 * kSecond, 0, kUp, 0, "t", 1);    // dropped: not down
  builder.add(2 * kSecond, 0, kDown, 0, "t", 2);  // kept
  builder.add(3 * kSecond, 0, kDown, 0, "t", 3);  // dropped: already down
  builder.add(4 * kSecond, 0, kUp, 0, "t", 4);    // kept
  builder.add(5 * kSecond, 0, kUp, 0, "t", 5);    // dropped: not down
  // A dropped event still counts for the order of times.
  CHECK_THROWS_AS(builder.add(4 * kSecond, 1, kDown, 0, "t", 6), InputError);
  const LoadedTrace loaded = std::move(builder).finish();
  CHECK(loaded.trace.events().size() == 2);
  CHECK(loaded.repairs.up_without_down == 2);
  CHECK(loaded.repairs.repeated_down == 1);
}

TEST_CASE("declared node count and duration are checked against the events") {
  TraceBuilder small(TraceBuilder::Naming::kNumbered, false);
  small.add(kSecond, 5, kDown, 0, "t", 1);
  small.set_node_count(3, "--nodes");
  CHECK_THROWS_WITH_AS(std::move(small).finish(),
                       "--nodes: 3 nodes declared, but the events name 6 (ids from 0)", InputError);
  TraceBuilder early(TraceBuilder::Naming::kNumbered, false);
  early.add(10 * kSecond, 0, kDown, 0, "t", 1);
  early.set_duration(5 * kSecond, "--days");
  CHECK_THROWS_AS(std::move(early).finish(), InputError);
  TraceBuilder larger(TraceBuilder::Naming::kNumbered, false);
  larger.add(10 * kSecond, 0, kDown, 0, "t", 1);
  larger.set_node_count(100, "--nodes");
  larger.set_duration(50 * kSecond, "--days");
  const Trace trace = std::move(larger).finish().trace;
  CHECK(trace.node_count() == 100);
  CHECK(trace.duration() == 50 * kSecond);
}

TEST_CASE("outages pair each down with the up that ends it") {
  TraceBuilder builder(TraceBuilder::Naming::kNumbered, false);
  builder.add(1 * kSecond, 0, kDown, 0, "t", 1);
  builder.add(2 * kSecond, 1, kDown, 0, "t", 2);
  builder.add(3 * kSecond, 0, kUp, 0, "t", 3);
  builder.add(4 * kSecond, 0, kDown, 0, "t", 4);
  const std::vector<Outage> out = outages(std::move(builder).finish().trace);
  REQUIRE(out.size() == 3);
  CHECK(out[0].node == 0);
  CHECK(out[0].down == 1 * kSecond);
  CHECK(out[0].up == 3 * kSecond);
  CHECK(out[1].node == 1);
  CHECK(out[1].up == -1);  // still down at the end
  CHECK(out[2].down == 4 * kSecond);
  CHECK(out[2].up == -1);
}

TEST_CASE("check_days: more than 0, at most the bound, and at least a millisecond") {
  // A millisecond is 1e-3 / 86,400 = 1.157e-8 days: 1.2e-8 days (1.04 ms) is kept, 1.1e-8 days
  // (0.95 ms) is not.
  CHECK(read_days("1.2e-8", "--days", kMaxDays, "11574 days") == 1.2e-8);
  CHECK(read_days("30", "--days", kMaxDays, "11574 days") == 30);
  CHECK_THROWS_WITH_AS((void)read_days("1.1e-8", "--days", kMaxDays, "11574 days"),
                       "--days: 1.1e-8 days is shorter than a millisecond, the finest step a "
                       "trace is generated or cut at",
                       InputError);
  for (const char* bad : {"0", "-1", "2.5"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(
        (void)read_days(bad, "--days", 2, "the trace's 2 days"),
        ("--days: must be > 0 and at most the trace's 2 days, got " + std::string(bad)).c_str(),
        InputError);
  }
  CHECK(max_days_text() == "11574 days");  // kMaxTime (1e9 s) / 86,400 s = 11,574.07 days
}

}  // namespace
}  // namespace recycle::traces
