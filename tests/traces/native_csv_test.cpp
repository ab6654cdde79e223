// The native CSV: reading a hand-written file, writing it back, and one test per malformed-line
// class.
#include "traces/native_csv.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "tests/traces/test_paths.hpp"
#include "traces/import_bamboo.hpp"
#include "traces/import_infinitehbd.hpp"
#include "traces/import_simgrid.hpp"

namespace recycle::traces {
namespace {

using testing::data_path;
constexpr Nanos kSecond = kNanosPerSecond;

TEST_CASE("reads a hand-written trace with named nodes, a quoted cause and declarations") {
  const LoadedTrace loaded = read_native_csv(data_path("tiny.csv"), {});
  const Trace& t = loaded.trace;
  CHECK_FALSE(t.numbered());
  CHECK(t.node_count() == 4);  // declared; three are named
  CHECK(t.duration() == 86'400 * kSecond);
  REQUIRE(t.events().size() == 7);
  CHECK(t.node_name(t.events()[0].node) == "gpu-a");
  CHECK(t.cause(t.events()[0].cause) == "maintenance, planned");
  CHECK(t.events()[3].time == 7'200'500'000'000);  // 7200.5 s
  CHECK(t.events()[3].kind == EventKind::kUp);
  CHECK(t.cause(t.events()[3].cause).empty());
  CHECK(t.node_name(t.events()[5].node) == "gpu-b");
  CHECK(t.cause(t.events()[5].cause) == "Network / Network Switch/Cable");
  CHECK(t.comments() ==
        std::vector<std::string>{"a hand-written trace: three named servers watched for one day"});
}

TEST_CASE("writing and reading again gives the same trace, and writing again the same bytes") {
  const Trace first = read_native_csv(data_path("tiny.csv"), {}).trace;
  const std::string text = format_native_csv(first);
  CHECK(
      text.starts_with("# a hand-written trace: three named servers watched for one day\n"
                       "# nodes: 4\n# duration_s: 86400.000\ntime_s,node,event,cause\n"
                       "0.000,gpu-a,down,\"maintenance, planned\"\n"));
  const Trace second = parse_native_csv(text, "again.csv", {}).trace;
  CHECK(second.events() == first.events());
  CHECK(second.node_count() == first.node_count());
  CHECK(second.duration() == first.duration());
  CHECK(format_native_csv(second) == text);
}

TEST_CASE("a trace is written only when it fits what the reader reads") {
  const Trace t = read_native_csv(data_path("tiny.csv"), {}).trace;
  const std::string text = format_native_csv(t);
  // Per process: ctest runs the tests of this file in parallel.
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("recycle_trace_fits_" + std::to_string(::getpid()) + ".csv"))
                               .string();
  // One byte short of the text: refused, naming the file, and nothing written.
  std::remove(path.c_str());
  CHECK_THROWS_WITH_AS(
      write_native_csv(t, path, text.size() - 1),
      (path + ": the trace's 7 events take more than the " + std::to_string(text.size() - 1) +
       " bytes a trace file may hold, so it would not read back")
          .c_str(),
      InputError);
  CHECK_FALSE(std::filesystem::exists(path));
  // Exactly the text: written, and it reads back.
  write_native_csv(t, path, text.size());
  CHECK(read_native_csv(path, {}).trace.events() == t.events());
  std::filesystem::remove(path);
  // The reader's own bound is above the 1 GiB of other text files: a trace at the event limit
  // (about 25 bytes an event) is larger than that.
  CHECK(kMaxTraceFileBytes >= static_cast<std::size_t>(kMaxEvents) * 25);
}

TEST_CASE("integer node cells make a numbered trace, any name a named one") {
  const Trace numbered =
      parse_native_csv("time_s,node,event,cause\n1,7,down,\n2,7,up,\n", "n.csv", {}).trace;
  CHECK(numbered.numbered());
  CHECK(numbered.node_count() == 8);
  CHECK(numbered.events()[0].node == 7);
  const Trace named =
      parse_native_csv("time_s,node,event,cause\n1,7,down,\n2,x,down,\n", "n.csv", {}).trace;
  CHECK_FALSE(named.numbered());
  CHECK(named.node_count() == 2);
  CHECK(named.node_name(0) == "7");
  // A leading zero is not how numbered nodes are written: the cell is a name.
  CHECK_FALSE(
      parse_native_csv("time_s,node,event,cause\n1,07,down,\n", "n.csv", {}).trace.numbered());
}

TEST_CASE("a quoted node cell is a name, even when it holds an integer") {
  const Trace t =
      parse_native_csv("time_s,node,event,cause\n1,\"3\",down,\n2,7,down,\n", "q.csv", {}).trace;
  CHECK_FALSE(t.numbered());
  CHECK(t.node_count() == 2);  // the names 3 and 7, not ids up to 7
  CHECK(t.node_name(t.events()[0].node) == "3");
  CHECK(t.node_name(t.events()[1].node) == "7");
}

/// An InfiniteHBD fault_start record of `node` at `day`, cause "L / C / `desc`".
std::string fault_start(const std::string& node, int day, const std::string& desc) {
  return "{\"node_id\": \"" + node + "\", \"event_time\": " + std::to_string(day) +
         ", \"event_type\": \"fault_start\", \"fault_type\": {\"Level\": \"L\", \"Class\": "
         "\"C\", \"Desc\": \"" +
         desc + "\"}}";
}

/// Writes `trace`, checks that the text ends with `tail`, reads it back and checks that writing it
/// again gives the same text; returns the trace read back.
Trace written_and_read(const Trace& trace, const std::string& tail) {
  const std::string text = format_native_csv(trace);
  CHECK(text.ends_with(tail));
  const Trace back = parse_native_csv(text, "back.csv", {}).trace;
  CHECK(format_native_csv(back) == text);
  return back;
}

TEST_CASE("a named trace whose names are integers is written quoted and reads back named") {
  // InfiniteHBD node "3": one node watched, down at day 1 (86,400 s).
  const Trace back = written_and_read(
      parse_infinitehbd("[" + fault_start("3", 1, "D") + "]", "num.json", {}).trace,
      "# nodes: 1\n# duration_s: 86400.000\ntime_s,node,event,cause\n"
      "86400.000,\"3\",down,L / C / D\n");
  CHECK_FALSE(back.numbered());
  CHECK(back.node_count() == 1);
  CHECK(back.node_name(back.events()[0].node) == "3");

  // SimGrid profiles 1 and 7, each up at 0 and down at 100 s: two nodes, not ids up to 7.
  const Trace sg_back = written_and_read(
      parse_simgrid({{"1", "1.txt", "0 1\n100 0\n"}, {"7", "7.txt", "0 1\n100 0\n"}}, {}).trace,
      "# nodes: 2\n# duration_s: 100.000\ntime_s,node,event,cause\n"
      "100.000,\"1\",down,\n100.000,\"7\",down,\n");
  CHECK(sg_back.node_count() == 2);
  CHECK(sg_back.events().size() == 2);
}

TEST_CASE("unquoted cells lose their surrounding spaces, quoted ones keep them") {
  const Trace t =
      parse_native_csv("time_s,node,event,cause\n1, a ,down, x \n2,\" a\",down,\" x \"\n", "s.csv",
                       {})
          .trace;
  CHECK(t.node_count() == 2);
  CHECK(t.node_name(t.events()[0].node) == "a");
  CHECK(t.cause(t.events()[0].cause) == "x");
  CHECK(t.node_name(t.events()[1].node) == " a");
  CHECK(t.cause(t.events()[1].cause) == " x ");
  // Quoting does not make a blank node a name.
  CHECK_THROWS_WITH_AS(parse_native_csv("time_s,node,event,cause\n1,\"  \",down,\n", "b.csv", {}),
                       "b.csv:2: empty node", InputError);
}

TEST_CASE("names and causes with surrounding spaces are quoted, so they read back the same") {
  // InfiniteHBD nodes " a" (day 1) and "a" (day 2) are two servers; the cause "L / C / D " keeps
  // its trailing space.
  const Trace back = written_and_read(
      parse_infinitehbd("[" + fault_start(" a", 1, "D ") + "," + fault_start("a", 2, "D") + "]",
                        "lead.json", {})
          .trace,
      "time_s,node,event,cause\n86400.000,\" a\",down,\"L / C / D \"\n"
      "172800.000,a,down,L / C / D\n");
  CHECK(back.node_count() == 2);
  REQUIRE(back.events().size() == 2);
  CHECK(back.node_name(back.events()[0].node) == " a");
  CHECK(back.node_name(back.events()[1].node) == "a");
  CHECK(back.cause(back.events()[0].cause) == "L / C / D ");
}

TEST_CASE("a UTF-8 byte order mark at the start of a file is skipped, in every line format") {
  // Native: node 1 down at 10 s, 3 nodes declared; an error on line 3 is still line 3.
  const Trace t = parse_native_csv("\xEF\xBB\xBF# nodes: 3\ntime_s,node,event,cause\n10,1,down,\n",
                                   "bom.csv", {})
                      .trace;
  CHECK(t.node_count() == 3);
  REQUIRE(t.events().size() == 1);
  CHECK(t.events()[0] == Event{10 * kSecond, 1, 0, EventKind::kDown});
  CHECK_THROWS_WITH_AS(
      parse_native_csv("\xEF\xBB\xBFtime_s,node,event,cause\n10,1,down,\nx,1,up,\n", "bom.csv", {}),
      "bom.csv:3: expected a number, got 'x'", InputError);
  // Bamboo: node1 added at 0 and removed at 2 s: one slot, down at 2 s.
  const Trace bamboo = parse_bamboo(
                           "\xEF\xBB\xBF"
                           "0,add,node1\n2000,remove,node1\n",
                           "bom-bamboo.csv", {})
                           .trace;
  REQUIRE(bamboo.events().size() == 1);
  CHECK(bamboo.events()[0].time == 2 * kSecond);
  // SimGrid: down at 10 s.
  const Trace simgrid = parse_simgrid({{"n", "n.txt",
                                        "\xEF\xBB\xBF"
                                        "10 0\n"}},
                                      {})
                            .trace;
  REQUIRE(simgrid.events().size() == 1);
  CHECK(simgrid.events()[0].time == 10 * kSecond);
}

TEST_CASE("CRLF line endings read as LF, CR line endings are refused naming the first CR's line") {
  const Trace t =
      parse_native_csv("# nodes: 3\r\ntime_s,node,event,cause\r\n10,1,down,\r\n", "crlf.csv", {})
          .trace;
  CHECK(t.node_count() == 3);
  REQUIRE(t.events().size() == 1);
  CHECK(t.events()[0] == Event{10 * kSecond, 1, 0, EventKind::kDown});
  const std::string cr_endings =
      ": a carriage return not followed by a line feed: the file uses CR line endings (classic "
      "Mac), expected LF or CRLF";
  CHECK_THROWS_WITH_AS(
      parse_native_csv("# nodes: 4\rtime_s,node,event,cause\r1,1,down,\r", "cr.csv", {}),
      ("cr.csv:1" + cr_endings).c_str(), InputError);
  CHECK_THROWS_WITH_AS(
      parse_native_csv("time_s,node,event,cause\n1,1,down,\n2,1,up,\r3,1,down,", "cr.csv", {}),
      ("cr.csv:3" + cr_endings).c_str(), InputError);
  CHECK_THROWS_WITH_AS(parse_bamboo("0,add,node1\r2000,remove,node1\r", "b.csv", {}),
                       ("b.csv:1" + cr_endings).c_str(), InputError);
}

TEST_CASE("errors quote at most 40 characters of a bad field") {
  const std::string forty(40, 'z');
  const std::string head = "time_s,node,event,cause\n";
  // A 1,000-character event, a time out of range, and a node name in an alternation error.
  CHECK_THROWS_WITH_AS(
      parse_native_csv(head + "1,a," + std::string(1'000, 'z') + ",\n", "long.csv", {}),
      ("long.csv:2: unknown event '" + forty + "...', expected down or up").c_str(), InputError);
  CHECK_THROWS_WITH_AS(
      parse_native_csv(head + "2000000000." + std::string(1'000, '0') + ",a,down,\n", "long.csv",
                       {}),
      ("long.csv:2: time_s must be in [0, 1e9] seconds, got 2000000000." + std::string(29, '0') +
       "...")
          .c_str(),
      InputError);
  CHECK_THROWS_WITH_AS(
      parse_native_csv(head + "1," + std::string(1'000, 'z') + ",up,\n", "long.csv", {}),
      ("long.csv:2: node '" + forty +
       "...' comes up but is not down (use --lenient to drop such "
       "events)")
          .c_str(),
      InputError);
}

TEST_CASE("a header-only file is a valid empty trace") {
  const Trace t = parse_native_csv("# nodes: 16\ntime_s,node,event,cause\n", "e.csv", {}).trace;
  CHECK(t.events().empty());
  CHECK(t.node_count() == 16);
  CHECK(t.duration() == 0);
}

TEST_CASE("import options override the file's declarations") {
  ImportOptions options;
  options.nodes = 10;
  options.duration = 100'000 * kSecond;
  const Trace t = read_native_csv(data_path("tiny.csv"), options).trace;
  CHECK(t.node_count() == 10);
  CHECK(t.duration() == 100'000 * kSecond);
  options.duration = 10 * kSecond;  // before the last event at 18000 s
  CHECK_THROWS_WITH_AS(read_native_csv(data_path("tiny.csv"), options),
                       "--days: the observation is declared to end at 10.000 s, before the last "
                       "event at 18000.000 s",
                       InputError);
}

struct BadFile {
  const char* file;
  const char* error;  ///< the whole message after the path
};

// Every malformed-line class: the first bad line is named, and what is wrong.
const std::vector<BadFile> kBadFiles = {
    {"missing_column.csv", ":3: expected 4 columns (time_s,node,event,cause), got 3"},
    {"bad_number.csv", ":3: expected a number, got '12.5x'"},
    {"time_backwards.csv",
     ":4: time goes backwards: 15.000 s after 20.000 s (events must be sorted by time)"},
    {"unknown_event.csv", ":3: unknown event 'crash', expected down or up"},
    {"empty.csv", ":1: empty file, expected the header time_s,node,event,cause"},
    {"garbage.bin", ":2: binary content (byte 0x1A), expected a text file"},
    {"bad_header.csv", ":1: expected the header time_s,node,event,cause"},
    {"negative_time.csv", ":2: time_s must be in [0, 1e9] seconds, got -1.000"},
    {"up_without_down.csv",
     ":3: node 4 comes up but is not down (use --lenient to drop such events)"},
    {"repeated_down.csv",
     ":3: node 3 goes down again without coming up since 10.000 s (use --lenient to drop such "
     "events)"},
    {"too_few_nodes.csv", ":1: 2 nodes declared, but the events name 6 (ids from 0)"},
};

TEST_CASE("every malformed line class is refused with file:line and what is wrong") {
  for (const BadFile& bad : kBadFiles) {
    CAPTURE(bad.file);
    const std::string path = data_path(bad.file);
    CHECK_THROWS_WITH_AS(read_native_csv(path, {}), (path + bad.error).c_str(), InputError);
  }
}

TEST_CASE(
    "a file with a NUL byte is refused by core's file reader, which names the file and line") {
  const std::string path = data_path("nul.bin");  // the NUL is on line 2, after "1.0,"
  CHECK_THROWS_WITH_AS(read_native_csv(path, {}),
                       (path + ":2: binary content (NUL byte), expected a text file").c_str(),
                       InputError);
}

TEST_CASE("lenient reads repair the alternation and count what they dropped") {
  const LoadedTrace up = read_native_csv(data_path("up_without_down.csv"), {.lenient = true});
  CHECK(up.trace.events().size() == 2);
  CHECK(up.repairs.up_without_down == 1);
  CHECK(up.repairs.repeated_down == 0);
  const LoadedTrace down = read_native_csv(data_path("repeated_down.csv"), {.lenient = true});
  CHECK(down.trace.events().size() == 2);  // 10 s down, 12 s up
  CHECK(down.trace.events()[1].time == 12 * kSecond);
  CHECK(down.repairs.repeated_down == 1);
  // Lenient does not make unsorted or malformed lines acceptable.
  CHECK_THROWS_AS(read_native_csv(data_path("time_backwards.csv"), {.lenient = true}), InputError);
}

TEST_CASE("declarations are checked") {
  CHECK_THROWS_WITH_AS(parse_native_csv("# nodes: 0\ntime_s,node,event,cause\n", "d.csv", {}),
                       "d.csv:1: nodes must be in [1, 16777216]", InputError);
  CHECK_THROWS_WITH_AS(
      parse_native_csv("# x\n# duration_s: soon\ntime_s,node,event,cause\n", "d.csv", {}),
      "d.csv:2: expected a number, got 'soon'", InputError);
  CHECK_THROWS_WITH_AS(parse_native_csv("# only a comment\n", "d.csv", {}),
                       "d.csv:2: no header, expected the header time_s,node,event,cause",
                       InputError);
}

TEST_CASE("a declaration repeated with another value is refused at the repeat") {
  CHECK_THROWS_WITH_AS(
      parse_native_csv("# nodes: 4\n# x\n# nodes: 8\ntime_s,node,event,cause\n", "r.csv", {}),
      "r.csv:3: nodes declared again as 8, but line 1 declares 4", InputError);
  CHECK_THROWS_WITH_AS(
      parse_native_csv("# duration_s: 10\n# duration_s: 20.5\ntime_s,node,event,cause\n", "r.csv",
                       {}),
      "r.csv:2: duration_s declared again as 20.500, but line 1 declares 10.000", InputError);
  // The same value again (written differently) is the same declaration.
  const Trace t = parse_native_csv(
                      "# nodes: 4\n# nodes: +4\n# duration_s: 10\n# duration_s: 10.000\n"
                      "time_s,node,event,cause\n",
                      "r.csv", {})
                      .trace;
  CHECK(t.node_count() == 4);
  CHECK(t.duration() == 10 * kSecond);
}

TEST_CASE("a line with more columns than four asks for quoting") {
  CHECK_THROWS_WITH_AS(
      parse_native_csv("time_s,node,event,cause\n1,2,down,GPU, HBM\n", "q.csv", {}),
      "q.csv:2: expected 4 columns (time_s,node,event,cause), got 5", InputError);
}

}  // namespace
}  // namespace recycle::traces
