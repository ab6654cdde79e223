// The SimGrid importer: state profiles per node, LOOPAFTER / PERIODICITY unrolled, a directory.
#include "traces/import_simgrid.hpp"

#include <doctest/doctest.h>

#include "core/error.hpp"
#include "tests/traces/test_paths.hpp"

namespace recycle::traces {
namespace {

using testing::data_path;
constexpr Nanos kSecond = kNanosPerSecond;
constexpr auto kDown = EventKind::kDown;
constexpr auto kUp = EventKind::kUp;

std::vector<std::tuple<Nanos, std::string, EventKind>> listing(const Trace& t) {
  std::vector<std::tuple<Nanos, std::string, EventKind>> out;
  for (const Event& e : t.events()) out.emplace_back(e.time / kSecond, t.node_name(e.node), e.kind);
  return out;
}

TEST_CASE("a directory of profiles, one looping, unrolled until --days") {
  // host1: down at 100 s, up at 150 s. host2: pattern (50 down, 60 up), LOOPAFTER 40 -> period 60 +
  // 40 = 100 s: down at 50, 150, 250, ... and up at 60, 160, 260, ...; cut at 0.003 days = 259.2 s.
  ImportOptions options;
  options.duration = seconds_to_trace_time(0.003 * 86'400);
  const Trace t = read_simgrid(data_path("simgrid"), options).trace;
  using L = std::vector<std::tuple<Nanos, std::string, EventKind>>;
  CHECK(listing(t) == L{{50, "host2", kDown},
                        {60, "host2", kUp},
                        {100, "host1", kDown},
                        {150, "host1", kUp},  // equal times: profiles in file-name order
                        {150, "host2", kDown},
                        {160, "host2", kUp},
                        {250, "host2", kDown}});
  CHECK(t.node_count() == 2);
  CHECK(t.duration() == 259'200'000'000);
}

TEST_CASE("SimGrid semantics: states are set, not toggled, and PERIODICITY is the period") {
  const auto parse = [](const std::string& text, Nanos duration = -1) {
    ImportOptions options;
    options.duration = duration;
    return parse_simgrid({{"n", "n.txt", text}}, options).trace;
  };
  using L = std::vector<std::tuple<Nanos, std::string, EventKind>>;
  // A node starts up: "0 1" and "20 1" change nothing; "10 0" twice is one down.
  CHECK(listing(parse("0 1\n10 0\n15 0\n20 1\n25 1\n")) == L{{10, "n", kDown}, {20, "n", kUp}});
  // "0 0": down from the start.
  CHECK(listing(parse("0 0\n5 1\n")) == L{{0, "n", kDown}, {5, "n", kUp}});
  // PERIODICITY 30 with the pattern (10 down, 20 up): every 30 s.
  CHECK(listing(parse("10 0\n20 1\nPERIODICITY 30\n", 65 * kSecond)) ==
        L{{10, "n", kDown}, {20, "n", kUp}, {40, "n", kDown}, {50, "n", kUp}});
}

TEST_CASE("a looping profile is bounded in periods and in state changes, at the bound") {
  const auto parse = [](const std::string& text, Nanos duration) {
    ImportOptions options;
    options.duration = duration;
    return parse_simgrid({{"n", "n.txt", text}}, options).trace;
  };
  // Always up, period 1 s: 999,999 s is 999,999 periods (kept, no event); 1,000,000 s is refused.
  CHECK(parse("0 1\nLOOPAFTER 1\n", 999'999 * kSecond).events().empty());
  CHECK_THROWS_WITH_AS(parse("0 1\nLOOPAFTER 1\n", 1'000'000 * kSecond),
                       "n.txt:2: the profile repeats every 1.000 s: unrolled up to --days "
                       "(1000000.000 s) it makes more than 1000000 periods (the limit for one "
                       "looping profile); give fewer --days or a longer period",
                       InputError);
  // Down at 2k s, up at 2k + 1 s (period 2 s). Up to 900,000 s: downs for k = 0..450,000 and ups
  // for k = 0..449,999, 900,001 changes in all. Up to 1,100,000 s the 1,000,001st is refused.
  CHECK(parse("0 0\n1 1\nLOOPAFTER 1\n", 900'000 * kSecond).events().size() == 900'001);
  CHECK_THROWS_WITH_AS(parse("0 0\n1 1\nLOOPAFTER 1\n", 1'100'000 * kSecond),
                       "n.txt:3: the profile repeats every 2.000 s: unrolled up to --days "
                       "(1100000.000 s) it makes more than 1000000 state changes (the limit for "
                       "one looping profile); give fewer --days or a longer period",
                       InputError);
}

TEST_CASE("SimGrid input errors name the line") {
  const std::string path = data_path("bad_simgrid.txt");
  CHECK_THROWS_WITH_AS(read_simgrid(path, {}),
                       (path + ":2: expected the value 0 (down) or 1 (up), got 0.5").c_str(),
                       InputError);
  const auto parse = [](const std::string& text) {
    return parse_simgrid({{"n", "n.txt", text}}, {});
  };
  CHECK_THROWS_WITH_AS(parse("10 0\n5 1\n"), "n.txt:2: time goes backwards: 5.000 s after 10.000 s",
                       InputError);
  CHECK_THROWS_WITH_AS(parse("10 0 1\n"), "n.txt:1: expected `date value` (2 columns), got 3",
                       InputError);
  CHECK_THROWS_WITH_AS(parse("10 0\nLOOPAFTER 5\n"),
                       "n.txt:2: the profile loops: give --days to say how long to unroll it",
                       InputError);
  CHECK_THROWS_WITH_AS(
      parse("STOCHASTIC\nEXP 1 1\n"),
      "n.txt:1: stochastic profiles are not supported, expected `date value` lines", InputError);
  CHECK_THROWS_WITH_AS(parse("x 1\n"), "n.txt:1: expected a number, got 'x'", InputError);
}

}  // namespace
}  // namespace recycle::traces
