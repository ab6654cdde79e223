// The validator: one hand-broken schedule per rule, each reported with its rule, worker, action
// and token; valid schedules pass.
#include <doctest/doctest.h>

#include "tests/planner/test_helpers.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "planner/generators.hpp"
#include "planner/language/lower.hpp"
#include "planner/language/validator.hpp"

namespace {

using namespace recycle::planner;
using namespace recycle::planner::testing;

std::size_t count(const std::vector<Violation>& violations, Rule rule) {
  return static_cast<std::size_t>(std::count_if(
      violations.begin(), violations.end(), [rule](const Violation& v) { return v.rule == rule; }));
}

/// Whether some violation has `rule`, `worker` and a message containing every one of `texts`.
bool has(const std::vector<Violation>& violations, Rule rule, WorkerId worker,
         std::initializer_list<std::string> texts) {
  return std::any_of(violations.begin(), violations.end(), [&](const Violation& v) {
    return v.rule == rule && v.worker == worker &&
           std::all_of(texts.begin(), texts.end(), [&](const std::string& t) {
             return v.message.find(t) != std::string::npos;
           });
  });
}

WorkerSchedule& worker(Schedule& schedule, WorkerId id) {
  const auto it = std::find_if(schedule.workers.begin(), schedule.workers.end(),
                               [id](const WorkerSchedule& w) { return w.id == id; });
  REQUIRE(it != schedule.workers.end());
  return *it;
}

void erase(std::vector<Action>& actions, ActionType type) {
  const auto it = std::find_if(actions.begin(), actions.end(),
                               [type](const Action& a) { return a.type == type; });
  REQUIRE(it != actions.end());
  actions.erase(it);
}

}  // namespace

TEST_CASE("rule names are distinct") {
  std::set<std::string_view> names;
  for (int r = 0; r <= static_cast<int>(Rule::kMemory); ++r)
    names.insert(rule_name(static_cast<Rule>(r)));
  CHECK(names.size() == 12);
  CHECK(rule_name(Rule::kDeadlock) == "deadlock");
}

TEST_CASE("valid schedules pass: generated, lowered, re-routed by hand") {
  for (const std::string name : {"gpipe", "1f1b", "zb-h1", "zb-h2"}) {
    CAPTURE(name);
    const Schedule schedule = generate(name, Layout{2, 3, 4, 1});
    CHECK(show(validate(schedule)).empty());
    CHECK(show(validate(lower(schedule))).empty());
  }
  CHECK(show(validate(lower(generate("interleaved", Layout{2, 2, 4, 2})))).empty());
  CHECK(show(validate(rerouted())).empty());
  CHECK(show(validate(lower(rerouted()))).empty());
}

TEST_CASE("layout: values out of range, or too many chunks") {
  Schedule schedule = generate("1f1b", Layout{1, 2, 2, 1});
  schedule.layout.pp = 0;
  auto violations = validate(schedule);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].rule == Rule::kLayout);
  CHECK(violations[0].message.find("pp 0") != std::string::npos);

  schedule.layout = Layout{1, 2, 2, kMaxInterleave + 1};
  violations = validate(schedule);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].message.find("interleave") != std::string::npos);

  schedule.layout = Layout{kMaxDp, kMaxPp, kMaxMicrobatches, 1};
  violations = validate(schedule);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].rule == Rule::kLayout);
}

TEST_CASE("worker: listed twice, outside the layout, failed but listed, or absent") {
  Schedule schedule = generate("1f1b", Layout{1, 2, 2, 1});
  schedule.workers.push_back(schedule.workers[1]);
  CHECK(has(validate(schedule), Rule::kWorker, {0, 1}, {"worker (0,1) is listed twice"}));

  schedule = generate("1f1b", Layout{1, 2, 2, 1});
  schedule.workers.push_back({{0, 2}, {}});
  CHECK(has(validate(schedule), Rule::kWorker, {0, 2}, {"worker (0,2) is outside the layout"}));

  schedule = generate("1f1b", Layout{1, 2, 2, 1});
  schedule.failed = {{0, 1}};
  CHECK(has(validate(schedule), Rule::kWorker, {0, 1}, {"worker (0,1) is failed"}));

  schedule = generate("1f1b", Layout{1, 2, 2, 1});
  schedule.workers.pop_back();
  const auto violations = validate(schedule);
  CHECK(has(violations, Rule::kWorker, {0, 1},
            {"worker (0,1) is neither in the schedule nor failed"}));
  CHECK(count(violations, Rule::kDeadlock) == 0);
}

TEST_CASE("action: virtual stage on another stage, micro-batch or owner out of range") {
  Schedule schedule = generate("gpipe", Layout{1, 2, 1, 1});
  worker(schedule, {0, 0}).actions[0].virtual_stage = 1;
  auto violations = validate(schedule);
  CHECK(has(violations, Rule::kAction, {0, 0}, {"worker (0,0) action 0 '1F0'", "stage 1"}));
  CHECK(violations[0].action_index == 0);

  schedule = generate("gpipe", Layout{1, 2, 1, 1});
  worker(schedule, {0, 1}).actions[1].microbatch = 5;
  CHECK(has(validate(schedule), Rule::kAction, {0, 1},
            {"worker (0,1) action 1 '1B5'", "micro-batch 5"}));

  schedule = generate("gpipe", Layout{1, 2, 1, 1});
  worker(schedule, {0, 1}).actions[0].owner = 3;
  CHECK(has(validate(schedule), Rule::kAction, {0, 1}, {"'1F0@3'", "owner 3"}));

  schedule = lower(generate("gpipe", Layout{1, 2, 1, 1}));
  worker(schedule, {0, 1}).actions.back().virtual_stage = 0;
  CHECK(has(validate(schedule), Rule::kAction, {0, 1}, {"'0OPT'"}));
}

TEST_CASE("missing: an F, a backward, an I, a W") {
  Schedule schedule = generate("1f1b", Layout{1, 2, 2, 1});
  // Stage 1's list is F0 B0 F1 B1: drop F1.
  auto& actions = worker(schedule, {0, 1}).actions;
  actions.erase(actions.begin() + 2);
  auto violations = validate(schedule);
  INFO(show(violations));
  REQUIRE(violations.size() == 1);
  CHECK(has(violations, Rule::kMissing, {0, 1}, {"worker (0,1)", "'1F1'", "micro-batch 1 ", "F"}));

  schedule = generate("1f1b", Layout{1, 2, 2, 1});
  std::erase_if(worker(schedule, {0, 0}).actions, [](const Action& a) { return a.type == B; });
  violations = validate(schedule);
  INFO(show(violations));
  REQUIRE(violations.size() == 1);
  CHECK(has(violations, Rule::kMissing, {0, 0},
            {"'0B0' and 1 more", "micro-batches 0-1", "backward"}));

  schedule = generate("zb-h1", Layout{2, 2, 2, 1});
  erase(worker(schedule, {1, 1}).actions, W);
  erase(worker(schedule, {1, 0}).actions, I);
  violations = validate(schedule);
  INFO(show(violations));
  CHECK(has(violations, Rule::kMissing, {1, 1}, {"'1W0'"}));
  CHECK(has(violations, Rule::kMissing, {1, 0}, {"'0I0'"}));
}

TEST_CASE("duplicate: an action done twice, or both a B and an I/W") {
  Schedule schedule = generate("1f1b", Layout{1, 2, 2, 1});
  worker(schedule, {0, 1}).actions.push_back(act(B, 1, 0));
  auto violations = validate(schedule);
  INFO(show(violations));
  CHECK(has(violations, Rule::kDuplicate, {0, 1},
            {"worker (0,1) action 4 '1B0': B done twice", "action 1 '1B0'"}));
  CHECK(count(violations, Rule::kDeadlock) == 0);

  schedule = generate("1f1b", Layout{1, 2, 2, 1});
  worker(schedule, {0, 1}).actions.push_back(act(W, 1, 1));
  CHECK(has(validate(schedule), Rule::kDuplicate, {0, 1}, {"'1W1'", "backward done twice"}));
}

TEST_CASE("wrong worker: F off its route, I/B away from its F, W away from its I") {
  // DP 2, PP 1: the two workers swap their forwards.
  Schedule schedule = generate("gpipe", Layout{2, 1, 1, 1});
  std::swap(worker(schedule, {0, 0}).actions[0], worker(schedule, {1, 0}).actions[0]);
  auto violations = validate(schedule);
  INFO(show(violations));
  CHECK(has(violations, Rule::kWrongWorker, {0, 0},
            {"worker (0,0) action 0 '0F0@1'", "worker (1,0)"}));
  CHECK(has(violations, Rule::kWrongWorker, {0, 0},
            {"worker (0,0) action 1 '0B0'", "which ran the F"}));

  // DP 2, PP 1, ZB: F I W on each worker; the two workers swap their Ws.
  schedule = generate("zb-h1", Layout{2, 1, 1, 1});
  std::swap(worker(schedule, {0, 0}).actions[2], worker(schedule, {1, 0}).actions[2]);
  violations = validate(schedule);
  INFO(show(violations));
  CHECK(has(violations, Rule::kWrongWorker, {0, 0},
            {"'0W0@1'", "W must run on worker (1,0), which ran the I"}));
}

TEST_CASE(
    "order: I before its F, W before its I, compute before its RECV, SEND before its compute") {
  Schedule schedule;
  schedule.layout = Layout{1, 1, 1, 1};
  schedule.workers = {{{0, 0}, {act(I, 0, 0), act(F, 0, 0), act(W, 0, 0)}}};
  auto violations = validate(schedule);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].rule == Rule::kOrder);
  CHECK(violations[0].message == "worker (0,0) action 0 '0I0': I before its F (the F is action 1)");

  schedule.workers[0].actions = {act(F, 0, 0), act(W, 0, 0), act(I, 0, 0)};
  violations = validate(schedule);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].message == "worker (0,0) action 1 '0W0': W before its I (the I is action 2)");

  // Lowered 1F1B, PP 2, M 1: stage 1 is RECV_F F B SEND_B ...; stage 0 is F SEND_F RECV_B B ...
  schedule = lower(generate("1f1b", Layout{1, 2, 1, 1}));
  std::swap(worker(schedule, {0, 1}).actions[0], worker(schedule, {0, 1}).actions[1]);
  violations = validate(schedule);
  INFO(show(violations));
  CHECK(has(violations, Rule::kOrder, {0, 1},
            {"worker (0,1) action 0 '1F0': F before the RECV_F", "action 1"}));

  schedule = lower(generate("1f1b", Layout{1, 2, 1, 1}));
  std::swap(worker(schedule, {0, 0}).actions[0], worker(schedule, {0, 0}).actions[1]);
  CHECK(has(validate(schedule), Rule::kOrder, {0, 0}, {"'0SEND_F0': SEND_F before the F"}));
}

TEST_CASE("route: missing for a failed worker, onto a failed worker, twice, out of range") {
  Schedule schedule = rerouted();
  schedule.routes.clear();
  auto violations = validate(schedule);
  INFO(show(violations));
  CHECK(
      has(violations, Rule::kRoute, {1, 1},
          {"worker (1,1) is failed but pipeline 1's micro-batches 0-1 at stage 1 have no route"}));

  schedule = rerouted();
  schedule.routes[1].dp = 1;
  violations = validate(schedule);
  INFO(show(violations));
  CHECK(has(violations, Rule::kRoute, {1, 1}, {"route 1", "worker (1,1) is failed"}));
  CHECK(has(violations, Rule::kRoute, {1, 1},
            {"pipeline 1's micro-batch 1 at stage 1 has no route"}));

  schedule = rerouted();
  schedule.routes.push_back(schedule.routes[0]);
  CHECK(has(validate(schedule), Rule::kRoute, {0, 1}, {"route 2", "already routed"}));

  schedule = rerouted();
  schedule.routes.push_back({1, 1, 7, 0});
  CHECK(count(validate(schedule), Rule::kRoute) == 1);
}

TEST_CASE("comm: a SEND without its RECV, a RECV without its SEND, neither, twice, wrong worker") {
  // Lowered 1F1B, PP 2, M 1: stage 0 is F SEND_F RECV_B B ...; stage 1 is RECV_F F B SEND_B ...
  const Schedule lowered = lower(generate("1f1b", Layout{1, 2, 1, 1}));
  Schedule schedule = lowered;
  erase(worker(schedule, {0, 1}).actions, ActionType::kRecvF);
  auto violations = validate(schedule);
  INFO(show(violations));
  REQUIRE(violations.size() == 1);
  CHECK(has(violations, Rule::kComm, {0, 0},
            {"worker (0,0) action 1 '0SEND_F0': no matching RECV_F ('1RECV_F0') on worker (0,1)"}));

  schedule = lowered;
  erase(worker(schedule, {0, 0}).actions, ActionType::kSendF);
  violations = validate(schedule);
  INFO(show(violations));
  REQUIRE(violations.size() == 1);
  CHECK(has(violations, Rule::kComm, {0, 1},
            {"'1RECV_F0': no matching SEND_F ('0SEND_F0') on worker (0,0)"}));

  schedule = lowered;
  erase(worker(schedule, {0, 0}).actions, ActionType::kSendF);
  erase(worker(schedule, {0, 1}).actions, ActionType::kRecvF);
  violations = validate(schedule);
  INFO(show(violations));
  REQUIRE(violations.size() == 1);
  CHECK(has(violations, Rule::kComm, {0, 1},
            {"'1F0': needs the output of worker (0,0) action 0 '0F0'"}));

  schedule = lowered;
  auto& stage1 = worker(schedule, {0, 1}).actions;
  stage1.insert(stage1.begin(), stage1[0]);
  CHECK(has(validate(schedule), Rule::kComm, {0, 1}, {"action 1 '1RECV_F0': RECV_F done twice"}));

  // DP 2: pipeline 1's SEND_B sent by pipeline 0's stage-1 worker.
  schedule = lower(generate("1f1b", Layout{2, 2, 1, 1}));
  auto& from = worker(schedule, {1, 1}).actions;
  const auto send = std::find_if(from.begin(), from.end(),
                                 [](const Action& a) { return a.type == ActionType::kSendB; });
  REQUIRE(send != from.end());
  const Action moved = *send;
  from.erase(send);
  worker(schedule, {0, 1}).actions.insert(worker(schedule, {0, 1}).actions.end() - 2, moved);
  CHECK(has(validate(schedule), Rule::kComm, {0, 1},
            {"'1SEND_B0@1': SEND_B on the wrong worker", "(1,1)"}));
}

TEST_CASE("iteration: REDUCE_GRAD missing on a peer, before a W, OPT first, twice") {
  const Schedule lowered = lower(generate("gpipe", Layout{2, 1, 1, 1}));  // F B REDUCE_GRAD OPT
  Schedule schedule = lowered;
  erase(worker(schedule, {1, 0}).actions, ActionType::kReduceGrad);
  auto violations = validate(schedule);
  INFO(show(violations));
  CHECK(has(violations, Rule::kIteration, {1, 0},
            {"worker (1,0) lists no REDUCE_GRAD but worker (0,0) does"}));
  CHECK(has(violations, Rule::kIteration, {1, 0}, {"'0OPT': OPT without REDUCE_GRAD"}));

  schedule = lowered;
  std::swap(worker(schedule, {0, 0}).actions[1], worker(schedule, {0, 0}).actions[2]);
  CHECK(has(
      validate(schedule), Rule::kIteration, {0, 0},
      {"worker (0,0) action 1 '0REDUCE_GRAD': REDUCE_GRAD before the worker's last W/B", "'0B0'"}));

  schedule = lowered;
  std::swap(worker(schedule, {0, 0}).actions[2], worker(schedule, {0, 0}).actions[3]);
  CHECK(has(validate(schedule), Rule::kIteration, {0, 0},
            {"action 2 '0OPT': OPT before REDUCE_GRAD (action 3)"}));

  schedule = lowered;
  worker(schedule, {0, 0}).actions.push_back(worker(schedule, {0, 0}).actions.back());
  CHECK(has(validate(schedule), Rule::kIteration, {0, 0}, {"action 4 '0OPT': OPT done twice"}));
}

TEST_CASE("deadlock: a cycle between two workers, reported once with its actions") {
  // Stage 0 runs B0 before F1; stage 1 runs micro-batch 1 first: B0 on stage 0 waits for B0 on
  // stage 1, which comes after F1 there, which needs F1 from stage 0, which comes after B0.
  Schedule schedule;
  schedule.layout = Layout{1, 2, 2, 1};
  schedule.workers = {{{0, 0}, {act(F, 0, 0), act(B, 0, 0), act(F, 0, 1), act(B, 0, 1)}},
                      {{0, 1}, {act(F, 1, 1), act(B, 1, 1), act(F, 1, 0), act(B, 1, 0)}}};
  const auto violations = validate(schedule);
  INFO(show(violations));
  REQUIRE(violations.size() == 1);
  const Violation& v = violations[0];
  CHECK(v.rule == Rule::kDeadlock);
  CHECK(v.worker == WorkerId{0, 0});
  CHECK(v.message.find("deadlock between workers (0,0), (0,1)") == 0);
  for (const std::string token : {"'0B0'", "'1B0'", "'1F1'", "'0F1'"}) {
    CAPTURE(token);
    CHECK(v.message.find(token) != std::string::npos);
  }
}

TEST_CASE("deadlock: a peer that never reaches REDUCE_GRAD blocks the others") {
  // Lowered 1F1B, DP 2, PP 2, M 1. (0,0) all-reduces before sending its F (an iteration error in
  // itself); (1,1) sends its gradient only after its all-reduce. Stage 1's all-reduce waits for
  // (0,1), which waits for (0,0)'s SEND_F, which waits for stage 0's all-reduce, which waits for
  // (1,0)'s B, which waits for (1,1)'s SEND_B, which waits for stage 1's all-reduce.
  Schedule schedule = lower(generate("1f1b", Layout{2, 2, 1, 1}));
  auto& a = worker(schedule, {0, 0}).actions;  // F SEND_F RECV_B B REDUCE_GRAD OPT
  std::rotate(a.begin() + 1, a.begin() + 4, a.begin() + 5);
  auto& b = worker(schedule, {1, 1}).actions;  // RECV_F F B SEND_B REDUCE_GRAD OPT
  std::swap(b[3], b[4]);
  const auto violations = validate(schedule);
  INFO(show(violations));
  CHECK(count(violations, Rule::kDeadlock) == 1);
  CHECK(has(violations, Rule::kDeadlock, {0, 0},
            {"REDUCE_GRAD all-reduce of stage 0", "all-reduce of stage 1"}));
}

TEST_CASE("memory: the first action over the limit, and the peak") {
  // 1F1B, PP 4, M 8: stage s holds min(4 - s, 8) at its peak; limit 2 breaks stages 0 and 1 at
  // their third forward.
  ValidationOptions options;
  options.memory_limit = 2;
  auto violations = validate(generate("1f1b", Layout{1, 4, 8, 1}), options);
  INFO(show(violations));
  REQUIRE(violations.size() == 2);
  CHECK(has(violations, Rule::kMemory, {0, 0}, {"worker (0,0) action 2 '0F2'", "peak 4"}));
  CHECK(has(violations, Rule::kMemory, {0, 1}, {"worker (0,1) action 2 '1F2'", "peak 3"}));
  CHECK(violations[0].action_index == 2);
  options.memory_limit = 4;
  CHECK(validate(generate("1f1b", Layout{1, 4, 8, 1}), options).empty());

  // Interleaved PP 2, V 2, M 4: stage 0 runs (2-0-1)*2 + (2-1)*2 = 4 warm-up forwards and one
  // more, so 5 chunks; the limit of 2 micro-batches is 4 chunks.
  options.memory_limit = 2;
  violations = validate(generate("interleaved", Layout{1, 2, 4, 2}), options);
  INFO(show(violations));
  REQUIRE(violations.size() == 1);
  CHECK(has(violations, Rule::kMemory, {0, 0}, {"action 4", "4 chunks at interleave 2", "peak 5"}));
}

TEST_CASE("every broken rule is reported, in the same order every time") {
  Schedule schedule = rerouted();
  schedule.routes.push_back(schedule.routes[0]);
  worker(schedule, {0, 0}).actions.push_back(act(F, 0, 0));
  worker(schedule, {1, 0}).actions[0].microbatch = 9;
  const auto first = validate(schedule);
  INFO(show(first));
  CHECK(count(first, Rule::kRoute) == 1);
  CHECK(count(first, Rule::kDuplicate) == 1);
  CHECK(count(first, Rule::kAction) == 1);
  CHECK(count(first, Rule::kMissing) == 1);
  CHECK(show(validate(schedule)) == show(first));
}

TEST_CASE("peak_inflight_chunks: +1 at F, -1 at W or B, per worker") {
  Schedule schedule;
  schedule.layout = Layout{1, 1, 3, 1};
  schedule.workers = {{{0, 0},
                       {act(F, 0, 0), act(F, 0, 1), act(I, 0, 0), act(F, 0, 2), act(W, 0, 0),
                        act(I, 0, 1), act(W, 0, 1), act(B, 0, 2)}}};
  CHECK(peak_inflight_chunks(schedule) == std::vector<std::int32_t>{3});
}
