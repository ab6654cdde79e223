#include "planner/language/schedule_io.hpp"

#include <doctest/doctest.h>

#include "tests/planner/test_helpers.hpp"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "planner/generators.hpp"
#include "planner/language/lower.hpp"

namespace recycle::planner {
namespace {

using namespace recycle::planner::testing;

constexpr auto F = ActionType::kForward;
constexpr auto I = ActionType::kBackwardInput;
constexpr auto W = ActionType::kBackwardWeight;
constexpr auto B = ActionType::kBackward;
constexpr auto SEND_F = ActionType::kSendF;
constexpr auto RECV_F = ActionType::kRecvF;
constexpr auto SEND_B = ActionType::kSendB;
constexpr auto RECV_B = ActionType::kRecvB;
constexpr auto REDUCE_GRAD = ActionType::kReduceGrad;
constexpr auto OPT = ActionType::kOptimizer;

/// what() of the InputError that `fn` throws; fails the test if it throws none.
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("expected an InputError");
  return {};
}

/// For messages whose tail is core's business: core's JsonView::as_int says "got N" for some values
/// only.
bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

std::string json_error(const std::string& text) {
  return error_of([&] { (void)schedule_from_json(text, "s.json"); });
}

std::string csv_error(const std::string& text) {
  return error_of([&] { (void)schedule_from_pytorch_csv(text, "p.csv"); });
}

/// A fresh file under the system temporary directory; removed with the fixture.
struct TempFile {
  std::filesystem::path path;
  TempFile(const std::string& name, const std::string& content)
      : path(std::filesystem::temp_directory_path() /
             ("recycle_schedule_io_test_" + std::to_string(::getpid()) + "_" + name)) {
    write_text_file(path.string(), content);
  }
  ~TempFile() { std::filesystem::remove(path); }
};

/// dp 2, pp 2, M 2; worker (1,1) failed, its two micro-batches re-routed to (0,1) with split
/// backward.
Schedule hand_built() {
  Schedule s;
  s.generator = "hand";
  s.layout = {2, 2, 2, 1};
  s.failed = {{1, 1}};
  s.routes = {{1, 1, 0, 0}, {1, 1, 1, 0}};
  s.workers = {
      {{0, 0},
       {{F, 0, 0, 0},
        {SEND_F, 0, 0, 0},
        {F, 0, 1, 0},
        {B, 0, 0, 0},
        {B, 0, 1, 0},
        {REDUCE_GRAD, 0, -1, 0},
        {OPT, 0, -1, 0}}},
      {{0, 1},
       {{RECV_F, 1, 0, 0},
        {F, 1, 0, 0},
        {F, 1, 0, 1},
        {B, 1, 0, 0},
        {I, 1, 0, 1},
        {F, 1, 1, 0},
        {F, 1, 1, 1},
        {B, 1, 1, 0},
        {I, 1, 1, 1},
        {W, 1, 0, 1},
        {W, 1, 1, 1},
        {OPT, 1, -1, 0}}},
      {{1, 0},
       {{F, 0, 0, 1},
        {F, 0, 1, 1},
        {RECV_B, 0, 0, 1},
        {B, 0, 0, 1},
        {B, 0, 1, 1},
        {OPT, 0, -1, 1}}},
  };
  return s;
}

const std::string kHandBuiltJson = R"({
  "format": "recycle.schedule/1",
  "generator": "hand",
  "layout": {"dp": 2, "pp": 2, "microbatches": 2, "interleave": 1},
  "optimizer": "barrier",
  "failed": [
    {"dp": 1, "stage": 1}
  ],
  "routes": [
    {"owner": 1, "stage": 1, "microbatch": 0, "dp": 0},
    {"owner": 1, "stage": 1, "microbatch": 1, "dp": 0}
  ],
  "workers": [
    {"dp": 0, "stage": 0, "actions": ["0F0", "0SEND_F0", "0F1", "0B0", "0B1", "0REDUCE_GRAD", "0OPT"]},
    {"dp": 0, "stage": 1, "actions": ["1RECV_F0", "1F0", "1F0@1", "1B0", "1I0@1", "1F1", "1F1@1", "1B1", "1I1@1", "1W0@1", "1W1@1", "1OPT"]},
    {"dp": 1, "stage": 0, "actions": ["0F0", "0F1", "0RECV_B0", "0B0", "0B1", "0OPT"]}
  ]
}
)";

// ---------------------------------------------------------------------------------------------
// JSON

TEST_CASE("schedule JSON: a hand-built schedule writes the text worked out by hand") {
  CHECK(to_json(hand_built()) == kHandBuiltJson);
}

TEST_CASE("schedule JSON: write, read, write gives the same schedule and the same text") {
  const auto round_trip = [](const Schedule& schedule) {
    const std::string text = to_json(schedule);
    const Schedule back = schedule_from_json(text, "mem.json");
    check_same(back, schedule);
    CHECK(to_json(back) == text);
  };
  SUBCASE("hand-built, with failed workers, routes and @owner tokens") {
    round_trip(hand_built());
  }
  SUBCASE("generated and lowered") {
    for (const std::string name : {"gpipe", "1f1b", "zb-h1", "zb-h2"}) {
      INFO(name);
      const Schedule schedule = generate(name, {3, 4, 8, 1});
      round_trip(schedule);
      round_trip(lower(schedule));
    }
    const Schedule interleaved = generate("interleaved", {2, 2, 4, 3});
    round_trip(interleaved);
    round_trip(lower(interleaved));
  }
  SUBCASE("empty lists") {
    Schedule schedule;
    schedule.generator = "quote \" and \\ and \xc3\xa9";  // escaped on writing
    schedule.layout = {1, 1, 1, 1};
    schedule.workers = {{{0, 0}, {}}};
    round_trip(schedule);
  }
}

TEST_CASE("schedule JSON: a hand-written file reads as the exact schedule, sorted") {
  // Workers, failed workers and routes out of order; interleave, failed and routes may be left out.
  const std::string text = R"({
    "format": "recycle.schedule/1", "generator": "mine",
    "layout": {"dp": 3, "pp": 2, "microbatches": 3, "interleave": 2},
    "failed": [{"dp": 2, "stage": 0}, {"dp": 1, "stage": 1}],
    "routes": [{"owner": 2, "stage": 0, "microbatch": 1, "dp": 0},
               {"owner": 1, "stage": 1, "microbatch": 2, "dp": 2},
               {"owner": 2, "stage": 0, "microbatch": 0, "dp": 1}],
    "workers": [
      {"dp": 1, "stage": 0, "actions": ["2F0@2", "0I2"]},
      {"dp": 0, "stage": 1, "actions": ["3W1", "1SEND_B0@0", "1REDUCE_GRAD", "1OPT"]},
      {"dp": 0, "stage": 0, "actions": []}
    ]
  })";
  Schedule want;
  want.generator = "mine";
  want.layout = {3, 2, 3, 2};
  want.failed = {{1, 1}, {2, 0}};
  want.routes = {{1, 1, 2, 2}, {2, 0, 0, 1}, {2, 0, 1, 0}};
  want.workers = {
      {{0, 0}, {}},
      {{0, 1}, {{W, 3, 1, 0}, {SEND_B, 1, 0, 0}, {REDUCE_GRAD, 1, -1, 0}, {OPT, 1, -1, 0}}},
      {{1, 0}, {{F, 2, 0, 2}, {I, 0, 2, 1}}},
  };
  check_same(schedule_from_json(text, "mine.json"), want);

  const std::string minimal = R"({"format": "recycle.schedule/1", "generator": "",
    "layout": {"dp": 1, "pp": 1, "microbatches": 1}, "workers": [{"dp": 0, "stage": 0, "actions": ["0B0"]}]})";
  Schedule small;
  small.layout = {1, 1, 1, 1};
  small.workers = {{{0, 0}, {{B, 0, 0, 0}}}};
  check_same(schedule_from_json(minimal, "small.json"), small);
}

TEST_CASE("schedule JSON: every malformed input is an InputError naming the file and the field") {
  // A valid file with one piece replaced: `layout`, `failed`, `workers` are spliced in.
  const auto file = [](const std::string& layout, const std::string& workers,
                       const std::string& extra = "") {
    return R"({"format": "recycle.schedule/1", "generator": "g", "layout": )" + layout + extra +
           R"(, "workers": )" + workers + "}";
  };
  const std::string layout = R"({"dp": 2, "pp": 2, "microbatches": 4, "interleave": 1})";
  const std::string worker = R"([{"dp": 0, "stage": 0, "actions": ["0F0"]}])";

  CHECK(json_error("") == "s.json:1:1: empty file, expected JSON");
  // Truncated after 37 characters: the error is one past them.
  CHECK(json_error(R"({"format": "recycle.schedule/1", "gen)") == "s.json:1:38: malformed JSON");
  CHECK(json_error("\x7f\x45\x4c\x46\x02\x01\x01\xff\xfe garbage").rfind("s.json:1:", 0) == 0);
  CHECK(json_error("[1, 2]") == "s.json: expected an object, got an array");

  CHECK(json_error(R"({"format": "recycle.schedule/2"})") ==
        R"(s.json: format: expected "recycle.schedule/1", got "recycle.schedule/2")");
  CHECK(json_error(R"({"format": 1})") == "s.json: format: expected a string, got a number");
  CHECK(json_error(R"({"generator": "g"})") == "s.json: format: missing field");
  CHECK(json_error(R"({"format": "recycle.schedule/1", "generator": "g", "layout": {"dp": 1}})") ==
        "s.json: layout.pp: missing field");
  CHECK(json_error(R"({"format": "recycle.schedule/1", "generator": "g", "layout": )" + layout +
                   "}") == "s.json: workers: missing field");

  // Wrong types.
  CHECK(json_error(file(R"({"dp": 2, "pp": "2", "microbatches": 4})", worker)) ==
        "s.json: layout.pp: expected an integer, got a string");
  CHECK(json_error(file(R"({"dp": 2, "pp": 2.5, "microbatches": 4})", worker)) ==
        "s.json: layout.pp: expected an integer, got 2.5");
  CHECK(json_error(file(layout, R"({"dp": 0})")) ==
        "s.json: workers: expected an array, got an object");
  CHECK(json_error(file(layout, R"([{"dp": 0, "stage": 0, "actions": "0F0"}])")) ==
        "s.json: workers[0].actions: expected an array, got a string");
  CHECK(json_error(file(layout, R"([{"dp": 0, "stage": 0, "actions": ["0F0", 7]}])")) ==
        "s.json: workers[0].actions[1]: expected a string, got a number");
  CHECK(json_error(file(layout, R"([{"dp": 0, "stage": 0}])")) ==
        "s.json: workers[0].actions: missing field");
  CHECK(json_error(file(layout, worker, R"(, "failed": {"dp": 0, "stage": 0})")) ==
        "s.json: failed: expected an array, got an object");

  // Bad tokens.
  CHECK(
      json_error(file(layout, R"([{"dp": 0, "stage": 0, "actions": []},
      {"dp": 0, "stage": 1, "actions": []},
      {"dp": 1, "stage": 0, "actions": ["0F0", "0F1", "0B0", "0B1", "0OPT", "XYZ"]}])")) ==
      R"(s.json: workers[2].actions[5]: expected an action token like "0F3" or "2I5@1", got "XYZ")");
  CHECK(
      json_error(file(layout, R"([{"dp": 0, "stage": 0, "actions": ["0OPT3"]}])")) ==
      R"(s.json: workers[0].actions[0]: expected an action token like "0F3" or "2I5@1", got "0OPT3")");
  CHECK(json_error(file(layout, R"([{"dp": 0, "stage": 0, "actions": ["0F-1"]}])"))
            .find("got \"0F-1\"") != std::string::npos);
  CHECK(json_error(file(layout, R"([{"dp": 0, "stage": 0, "actions": ["0F99999999999"]}])"))
            .find("workers[0].actions[0]: expected an action token") != std::string::npos);
  const std::string long_token(100, 'Q');
  CHECK(json_error(
            file(layout, R"([{"dp": 0, "stage": 0, "actions": [")" + long_token + R"("]}])")) ==
        R"(s.json: workers[0].actions[0]: expected an action token like "0F3" or "2I5@1", got ")" +
            std::string(40, 'Q') + R"(...")");
  CHECK(
      json_error(file(layout, R"([{"dp": 0, "stage": 0, "actions": ["0F\u0001"]}])")) ==
      R"(s.json: workers[0].actions[0]: expected an action token like "0F3" or "2I5@1", got "0F\x01")");

  // Out of range (positive values: the message may or may not end in ", got N").
  CHECK(json_error(file(R"({"dp": 2, "pp": 0, "microbatches": 4})", worker)) ==
        "s.json: layout.pp: expected an integer in [1, 1024], got 0");
  CHECK(starts_with(json_error(file(R"({"dp": 65537, "pp": 2, "microbatches": 4})", worker)),
                    "s.json: layout.dp: expected an integer in [1, 65536]"));
  CHECK(starts_with(json_error(file(R"({"dp": 2, "pp": 2, "microbatches": 70000})", worker)),
                    "s.json: layout.microbatches: expected an integer in [1, 65536]"));
  CHECK(starts_with(
      json_error(file(R"({"dp": 2, "pp": 2, "microbatches": 4, "interleave": 65})", worker)),
      "s.json: layout.interleave: expected an integer in [1, 64]"));
  CHECK(json_error(file(R"({"dp": 2, "pp": 2, "microbatches": 18446744073709551615})", worker)) ==
        "s.json: layout.microbatches: expected an integer in [1, 65536], got 18446744073709551615");
  CHECK(starts_with(json_error(file(layout, R"([{"dp": 0, "stage": 2, "actions": []}])")),
                    "s.json: workers[0].stage: expected an integer in [0, 1]"));
  CHECK(json_error(file(layout, R"([{"dp": -1, "stage": 0, "actions": []}])")) ==
        "s.json: workers[0].dp: expected an integer in [0, 1], got -1");
  CHECK(
      json_error(file(layout, R"([{"dp": 0, "stage": 0, "actions": ["0F0", "2F0"]}])")) ==
      R"(s.json: workers[0].actions[1]: "2F0": virtual stage 2 out of range: the layout has 2 (pp 2 x interleave 1))");
  CHECK(
      json_error(file(layout, R"([{"dp": 0, "stage": 0, "actions": ["0F4"]}])")) ==
      R"(s.json: workers[0].actions[0]: "0F4": micro-batch 4 out of range: the layout has 4 per pipeline)");
  CHECK(
      json_error(file(layout, R"([{"dp": 1, "stage": 0, "actions": ["0F1@2"]}])")) ==
      R"(s.json: workers[0].actions[0]: "0F1@2": owner pipeline 2 out of range: the layout has dp 2)");
  CHECK(starts_with(json_error(file(layout, worker, R"(, "failed": [{"dp": 2, "stage": 0}])")),
                    "s.json: failed[0].dp: expected an integer in [0, 1]"));
  CHECK(starts_with(
      json_error(file(layout, worker,
                      R"(, "routes": [{"owner": 1, "stage": 0, "microbatch": 4, "dp": 0}])")),
      "s.json: routes[0].microbatch: expected an integer in [0, 3]"));
  CHECK(json_error(
            file(layout, worker, R"(, "routes": [{"owner": 1, "stage": 0, "microbatch": 0}])")) ==
        "s.json: routes[0].dp: missing field");

  // Duplicates.
  CHECK(json_error(file(
            layout, R"([{"dp": 1, "stage": 1, "actions": []}, {"dp": 0, "stage": 0, "actions": []},
                                   {"dp": 1, "stage": 1, "actions": []}])")) ==
        "s.json: workers[2]: worker (1,1) is listed twice (first at workers[0])");
  CHECK(json_error(file(layout, worker,
                        R"(, "failed": [{"dp": 1, "stage": 0}, {"dp": 1, "stage": 0}])")) ==
        "s.json: failed[1]: worker (1,0) is listed twice (first at failed[0])");
}

TEST_CASE("schedule JSON: 2,048 workers x 400 actions round trip") {
  // GPipe with 200 micro-batches: 200 F and 200 B on each of 256 x 8 workers.
  const Schedule schedule = generate("gpipe", {256, 8, 200, 1});
  REQUIRE(schedule.workers.size() == 2048);
  REQUIRE(schedule.workers.back().actions.size() == 400);
  const std::string text = to_json(schedule);
  const Schedule back = schedule_from_json(text, "big.json");
  check_same(back, schedule);
}

// ---------------------------------------------------------------------------------------------
// PyTorch CSV

TEST_CASE("PyTorch CSV: 1F1B on 2 stages, 2 micro-batches, on a unit time grid") {
  // Stage 0 runs F0 F1 B0 B1, stage 1 runs F0 B0 F1 B1, every action one step:
  //   t   0    1    2    3    4    5
  //   s0  0F0  0F1  -    0B0  -    0B1   (0B0 waits for 1B0, ending at 3; 0B1 for 1B1, ending at 5)
  //   s1  -    1F0  1B0  1F1  1B1        (1F0 waits for 0F0; 1F1 for 0F1 and 1B0)
  const std::string expected =
      "0F0,0F1,,0B0,,0B1\n"
      ",1F0,1B0,1F1,1B1\n";
  const Schedule schedule = generate("1f1b", {1, 2, 2, 1});
  CHECK(to_pytorch_csv(schedule, CsvFormat::kComputeOnly) == expected);
  // Every pipeline runs pipeline 0's lists: the same CSV; lowering changes nothing on the grid.
  CHECK(to_pytorch_csv(generate("1f1b", {3, 2, 2, 1}), CsvFormat::kComputeOnly) == expected);
  CHECK(to_pytorch_csv(lower(schedule), CsvFormat::kComputeOnly) == expected);

  Schedule want;
  want.generator = "file";
  want.layout = {1, 2, 2, 1};
  want.workers = {{{0, 0}, {{F, 0, 0, 0}, {F, 0, 1, 0}, {B, 0, 0, 0}, {B, 0, 1, 0}}},
                  {{0, 1}, {{F, 1, 0, 0}, {B, 1, 0, 0}, {F, 1, 1, 0}, {B, 1, 1, 0}}}};
  const Schedule back = schedule_from_pytorch_csv(expected, "1f1b.csv");
  check_same(back, want);
  CHECK(to_pytorch_csv(back, CsvFormat::kComputeOnly) == expected);
}

TEST_CASE("PyTorch CSV: lowered 1F1B lists every action of each rank in order") {
  // torch's _add_send_recv, stepped by hand on 1F1B P = 2, M = 2 (rank 0: F0 F1 B0 B1, rank 1:
  // F0 B0 F1 B1), appends a RECV to the reader when the sender's compute is lowered: round 1 rank 0
  // F0 SEND_F0 (rank 1 gets RECV_F0), rank 1 F0; round 2 rank 0 F1 SEND_F1 (rank 1 gets RECV_F1),
  // rank 1 B0 SEND_B0 (rank 0 gets RECV_B0); round 3 rank 0 B0, rank 1 F1; round 4 rank 1 B1
  // SEND_B1 (rank 0 gets RECV_B1); round 5 rank 0 B1. torch 2.8 has no other token.
  const std::string expected =
      "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
      "1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1B1,1SEND_B1\n";
  const Schedule lowered = lower(generate("1f1b", {2, 2, 2, 1}));
  CHECK(to_pytorch_csv(lowered, CsvFormat::kComputeComms, TorchVersion::k2_8) == expected);

  const Schedule back = schedule_from_pytorch_csv(expected, "comms.csv");
  Schedule want = lower(generate("1f1b", {1, 2, 2, 1}));
  want.generator = "file";
  for (WorkerSchedule& w : want.workers)
    w.actions.resize(w.actions.size() - 2);  // REDUCE_GRAD, OPT
  check_same(back, want);
  CHECK(to_pytorch_csv(back, CsvFormat::kComputeComms, TorchVersion::k2_8) == expected);

  // recycle's own lowered form, with its REDUCE_GRAD and OPT, still reads as it did.
  const std::string own =
      "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1,0REDUCE_GRAD,0OPT\n"
      "1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1B1,1SEND_B1,1REDUCE_GRAD,1OPT\n";
  want = lower(generate("1f1b", {1, 2, 2, 1}));
  want.generator = "file";
  check_same(schedule_from_pytorch_csv(own, "own.csv"), want);
}

TEST_CASE("PyTorch CSV: round trips infer micro-batches and interleave from the tokens") {
  // Layouts with dp 1, so the schedule read back equals the one written (but for the generator).
  // compute_comms round trips are in torch_dialect_test.cpp.
  const auto round_trip = [](const Schedule& schedule) {
    const std::string csv = to_pytorch_csv(schedule, CsvFormat::kComputeOnly);
    const Schedule back = schedule_from_pytorch_csv(csv, "rt.csv");
    Schedule want = schedule;
    want.generator = "file";
    check_same(back, want);
    CHECK(to_pytorch_csv(back, CsvFormat::kComputeOnly) == csv);
  };
  for (const std::string name : {"gpipe", "1f1b", "zb-h1", "zb-h2"}) {
    INFO(name);
    round_trip(generate(name, {1, 4, 6, 1}));
  }
  round_trip(generate("interleaved", {1, 2, 4, 3}));  // virtual stages up to 5: interleave 3
  round_trip(generate("zb-v", layout_for("zb-v", {1, 4, 8, 1})));  // placed in a V
}

TEST_CASE("PyTorch CSV: reading skips idle cells and spaces") {
  Schedule want;
  want.generator = "file";
  want.layout = {1, 3, 1, 2};  // virtual stage 5 on rank 2: 2 chunks of 3 ranks
  want.workers = {{{0, 0}, {{F, 0, 0, 0}}},
                  {{0, 1}, {{F, 4, 0, 0}}},
                  {{0, 2}, {{I, 5, 0, 0}, {SEND_B, 5, 0, 0}, {OPT, 2, -1, 0}}}};
  check_same(schedule_from_pytorch_csv("0F0,,\n,4F0\r\n , 5I0 ,5SEND_B0,,2OPT,\n", "s.csv"), want);
}

TEST_CASE("PyTorch CSV: only schedules whose pipelines all run one list can be written") {
  const std::string refused =
      "--format: the PyTorch CSV holds one fault-free pipeline; this schedule has failed workers "
      "and "
      "re-routes work, write JSON instead";
  CHECK(error_of([] { (void)to_pytorch_csv(hand_built(), CsvFormat::kComputeComms); }) == refused);
  CHECK(error_of([] { (void)to_pytorch_csv(hand_built(), CsvFormat::kComputeOnly); }) == refused);

  const std::string differ =
      "--format: the PyTorch CSV holds one pipeline that every pipeline runs; this schedule's "
      "pipelines "
      "run different lists, write JSON instead";
  Schedule swapped = generate("1f1b", {2, 2, 2, 1});
  std::swap(swapped.workers[3].actions[0], swapped.workers[3].actions[1]);
  CHECK(error_of([&] { (void)to_pytorch_csv(swapped, CsvFormat::kComputeComms); }) == differ);
  Schedule borrowed = generate("1f1b", {2, 2, 2, 1});
  borrowed.workers[2].actions[0].owner = 0;  // pipeline 1 runs pipeline 0's micro-batch
  CHECK(error_of([&] { (void)to_pytorch_csv(borrowed, CsvFormat::kComputeOnly); }) == differ);
  Schedule missing = generate("1f1b", {2, 2, 2, 1});
  missing.workers.pop_back();
  CHECK(error_of([&] { (void)to_pytorch_csv(missing, CsvFormat::kComputeComms); }) == differ);
}

TEST_CASE("PyTorch CSV: every malformed input is an InputError naming the file and the line") {
  CHECK(csv_error("") ==
        "p.csv: empty file, expected a PyTorch pipelining CSV (one row of action tokens per rank)");
  CHECK(csv_error("\n\n  \n") ==
        "p.csv: empty file, expected a PyTorch pipelining CSV (one row of action tokens per rank)");
  CHECK(csv_error(",,\n,\n") == "p.csv: no action tokens, expected at least one");
  CHECK(
      csv_error("0F0,0B0\n1F0,XYZ,1B0\n") ==
      R"(p.csv:2: column 2: expected an action token like "0F3" or "2I5@1" or a torch token like "1WAIT_SEND_F0", got 'XYZ')");
  CHECK(csv_error("0F0,0B0\n1F0,1B0,\n2F0,1B0\n") ==
        "p.csv:3: column 2: '1B0' is for stage 1 (virtual stage 1 of 3 ranks), but this row is "
        "rank 2");
  CHECK(csv_error("0F0,1F0\n1F0\n") ==
        "p.csv:1: column 2: '1F0' is for stage 1 (virtual stage 1 of 2 ranks), but this row is "
        "rank 0");
  CHECK(csv_error("0F0@1\n") ==
        "p.csv:1: column 1: '0F0@1' names pipeline 1, but a PyTorch CSV holds one pipeline (0)");
  CHECK(csv_error("0F0\n1F0\n192F0\n") ==
        "p.csv:3: column 1: '192F0': virtual stage out of range: at most 64 chunks per rank, so at "
        "most 191");
  CHECK(csv_error("0F65536\n") ==
        "p.csv:1: column 1: '0F65536': micro-batch out of range: at most 65536 per pipeline");
  CHECK(csv_error("0F0,\"1F0\n") == "p.csv:1: unterminated quoted field");
  CHECK(
      csv_error("\x7f"
                "ELF\x02\x01\x01\xff\xfe,\x01\n") ==
      R"(p.csv:1: column 1: expected an action token like "0F3" or "2I5@1" or a torch token like "1WAIT_SEND_F0", got '\x7FELF\x02\x01\x01\xFF\xFE')");
  std::string many_rows;
  for (int i = 0; i < 1025; ++i) many_rows += std::to_string(i) + "F0\n";
  CHECK(csv_error(many_rows) == "p.csv:1025: too many rows: at most 1024 pipeline ranks");
}

TEST_CASE("load_schedule: JSON if the file starts with '{', else PyTorch CSV") {
  const TempFile json("a.json", "  \n" + to_json(hand_built()));
  check_same(load_schedule(json.path.string()), hand_built());

  const TempFile csv("b.csv", "0F0,0B0\n1F0,1B0\n");
  CHECK(load_schedule(csv.path.string()).layout == Layout{1, 2, 1, 1});

  const TempFile empty("c.csv", "");
  CHECK(error_of([&] { (void)load_schedule(empty.path.string()); }) ==
        empty.path.string() +
            ": empty file, expected a PyTorch pipelining CSV (one row of action tokens per rank)");

  const TempFile truncated("d.json", to_json(hand_built()).substr(0, 200));
  CHECK(error_of([&] {
          (void)load_schedule(truncated.path.string());
        }).rfind(truncated.path.string() + ":", 0) == 0);

  const TempFile garbage("e.bin", "\xde\xad\xbe\xef\n\x01\x02\x03");
  CHECK(error_of([&] {
          (void)load_schedule(garbage.path.string());
        }).rfind(garbage.path.string() + ":1: ", 0) == 0);

  CHECK(error_of([] {
          (void)load_schedule("/nonexistent/recycle/schedule.json");
        }).find("/nonexistent/recycle/schedule.json") != std::string::npos);
}

}  // namespace
}  // namespace recycle::planner
