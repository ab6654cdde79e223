// The lowering pass: every SEND pairs with exactly one RECV on the worker that needs the data,
// checked here by scanning the lists (independently of the validator), on fault-free and
// re-routed schedules; REDUCE_GRAD and OPT close every list; lowered schedules validate and time
// as their compute-only form does when communication is free.
#include <doctest/doctest.h>

#include "tests/planner/test_helpers.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "planner/generators.hpp"
#include "planner/lower.hpp"
#include "planner/timing.hpp"
#include "planner/validator.hpp"

namespace {

using namespace recycle::planner;
using namespace recycle::planner::testing;

using Key = std::tuple<ActionType, std::int32_t, std::int32_t, std::int32_t>;  // type, v, mb, owner
struct Where {
  WorkerId worker;
  std::size_t index;
};

/// Every occurrence of every chunk action, by (type, virtual stage, micro-batch, owner).
std::map<Key, std::vector<Where>> occurrences(const Schedule& schedule) {
  std::map<Key, std::vector<Where>> found;
  for (const WorkerSchedule& w : schedule.workers) {
    for (std::size_t i = 0; i < w.actions.size(); ++i) {
      const Action& a = w.actions[i];
      if (is_per_iteration(a.type)) continue;
      found[{a.type, a.virtual_stage, a.microbatch, a.owner}].push_back({w.id, i});
    }
  }
  return found;
}

/// Checks the pairing of a lowered schedule against its compute-only source.
void check_pairs(const Schedule& compute, const Schedule& lowered) {
  const auto at = occurrences(lowered);
  const auto only = [&](ActionType type, std::int32_t v, std::int32_t mb,
                        std::int32_t o) -> const Where* {
    const auto it = at.find({type, v, mb, o});
    if (it == at.end() || it->second.size() != 1) return nullptr;
    return &it->second.front();
  };
  const auto backward = [&](std::int32_t v, std::int32_t mb, std::int32_t o) {
    const Where* w = only(I, v, mb, o);
    return w != nullptr ? w : only(B, v, mb, o);
  };
  const std::int32_t last = compute.layout.virtual_stages() - 1;
  std::size_t sends = 0;
  for (const auto& [key, where] : at) {
    const auto [type, v, mb, o] = key;
    CAPTURE(to_token(Action{type, v, mb, o}, -1));
    if (type == ActionType::kSendF || type == ActionType::kSendB) ++sends;
    if (!is_comm(type)) continue;
    REQUIRE(where.size() == 1);
    const WorkerId self = where[0].worker;
    const bool forward = type == ActionType::kSendF || type == ActionType::kRecvF;
    const Where* here = forward ? only(F, v, mb, o) : backward(v, mb, o);
    REQUIRE(here != nullptr);
    CHECK(here->worker == self);
    if (type == ActionType::kSendF) {
      const Where* recv = only(ActionType::kRecvF, v + 1, mb, o);
      REQUIRE(recv != nullptr);
      CHECK(recv->worker == only(F, v + 1, mb, o)->worker);
      CHECK(here->index + 1 == where[0].index);  // right after its F
    } else if (type == ActionType::kRecvF) {
      const Where* send = only(ActionType::kSendF, v - 1, mb, o);
      REQUIRE(send != nullptr);
      CHECK(send->worker == only(F, v - 1, mb, o)->worker);
      CHECK(where[0].index + 1 == here->index);  // right before its F
    } else if (type == ActionType::kSendB) {
      const Where* recv = only(ActionType::kRecvB, v - 1, mb, o);
      REQUIRE(recv != nullptr);
      CHECK(recv->worker == backward(v - 1, mb, o)->worker);
      CHECK(here->index + 1 == where[0].index);
    } else {
      const Where* send = only(ActionType::kSendB, v + 1, mb, o);
      REQUIRE(send != nullptr);
      CHECK(send->worker == backward(v + 1, mb, o)->worker);
      CHECK(where[0].index + 1 == here->index);
    }
  }
  // Conversely: every data edge between two workers has its SEND and RECV.
  std::size_t remote = 0;
  for (const auto& [key, where] : at) {
    const auto [type, v, mb, o] = key;
    if (type == F && v < last && only(F, v + 1, mb, o)->worker != where[0].worker) {
      ++remote;
      CHECK(only(ActionType::kSendF, v, mb, o) != nullptr);
    }
    if ((type == I || type == B) && v > 0 && backward(v - 1, mb, o)->worker != where[0].worker) {
      ++remote;
      CHECK(only(ActionType::kSendB, v, mb, o) != nullptr);
    }
  }
  CHECK(sends == remote);
  // Compute actions keep their order; REDUCE_GRAD then OPT close each list.
  REQUIRE(lowered.workers.size() == compute.workers.size());
  for (std::size_t w = 0; w < lowered.workers.size(); ++w) {
    const WorkerSchedule& lw = lowered.workers[w];
    std::vector<Action> kept;
    std::copy_if(lw.actions.begin(), lw.actions.end(), std::back_inserter(kept),
                 [](const Action& a) { return is_compute(a.type); });
    CHECK(kept == compute.workers[w].actions);
    REQUIRE(lw.actions.size() >= 2);
    CHECK(lw.actions[lw.actions.size() - 2].type == ActionType::kReduceGrad);
    CHECK(lw.actions.back().type == ActionType::kOptimizer);
    CHECK(lw.actions.back().virtual_stage == lw.id.stage);
    CHECK(std::count_if(lw.actions.begin(), lw.actions.end(),
                        [](const Action& a) { return is_per_iteration(a.type); }) == 2);
  }
}

}  // namespace

TEST_CASE("lowering fault-free schedules: pairs, closing actions, valid, same timing") {
  struct Case {
    std::string name;
    Layout layout;
  };
  const std::vector<Case> cases = {
      {"gpipe", {2, 3, 4, 1}},       {"1f1b", {1, 1, 3, 1}},        {"1f1b", {3, 4, 9, 1}},
      {"interleaved", {2, 2, 4, 2}}, {"interleaved", {1, 1, 2, 3}}, {"interleaved", {1, 3, 6, 3}},
      {"zb-h1", {2, 4, 8, 1}},       {"zb-h2", {2, 3, 7, 1}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CAPTURE(c.layout.pp);
    CAPTURE(c.layout.interleave);
    const Schedule compute = generate(c.name, c.layout);
    const Schedule lowered = lower(compute);
    check_pairs(compute, lowered);
    CHECK(lowered.has_comms() == (c.layout.pp > 1));
    CHECK(show(validate(lowered)).empty());
    CHECK(strip_to_compute(lowered).workers[0].actions == compute.workers[0].actions);
    const Costs costs = Costs::uniform(c.layout.virtual_stages(), {3, 4, 2});
    const auto a = compute_timeline(compute, costs);
    const auto b = compute_timeline(lowered, costs);
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    CHECK(a->makespan == b->makespan);
  }
}

TEST_CASE("lowering a re-routed schedule: sends go to the routed worker") {
  const Schedule compute = rerouted();
  REQUIRE(show(validate(compute)).empty());
  const Schedule lowered = lower(compute);
  check_pairs(compute, lowered);
  CHECK(show(validate(lowered)).empty());
  CHECK(lowered.failed == compute.failed);
  CHECK(lowered.routes == compute.routes);
  // (1,0) sends pipeline 1's activations to (0,1), the routed worker, and receives its gradients.
  const std::vector<Action> expected = {act(F, 0, 0, 1),
                                        act(ActionType::kSendF, 0, 0, 1),
                                        act(F, 0, 1, 1),
                                        act(ActionType::kSendF, 0, 1, 1),
                                        act(ActionType::kRecvB, 0, 0, 1),
                                        act(B, 0, 0, 1),
                                        act(ActionType::kRecvB, 0, 1, 1),
                                        act(B, 0, 1, 1),
                                        Action{ActionType::kReduceGrad, 0, -1, 1},
                                        Action{ActionType::kOptimizer, 0, -1, 1}};
  CHECK(lowered.workers[2].actions == expected);
  // (0,1) receives from both pipelines' stage-0 workers and sends gradients back to each.
  const auto& stage1 = lowered.workers[1].actions;
  CHECK(std::count_if(stage1.begin(), stage1.end(),
                      [](const Action& a) { return a.type == ActionType::kRecvF; }) == 4);
  CHECK(std::count_if(stage1.begin(), stage1.end(),
                      [](const Action& a) { return a.type == ActionType::kSendB; }) == 4);
}

TEST_CASE(
    "lowering an interleaved re-routed schedule: chunks of one micro-batch stay on the routed "
    "worker") {
  // PP 2, V 2, DP 2, M 2, worker (1,0) failed: pipeline 1 runs stage 0 (virtual stages 0 and 2)
  // on (0,0). Every worker runs its chunks GPipe-style: all forwards in virtual-stage order, then
  // all backwards in reverse.
  Schedule s;
  s.layout = Layout{2, 2, 2, 2};
  s.failed = {{1, 0}};
  s.routes = {{1, 0, 0, 0}, {1, 0, 1, 0}};
  const auto list = [](std::int32_t stage, std::vector<std::int32_t> owners) {
    std::vector<Action> out;
    for (const std::int32_t v : {stage, stage + 2}) {
      for (const std::int32_t o : owners) {
        for (std::int32_t mb = 0; mb < 2; ++mb) out.push_back(act(F, v, mb, o));
      }
    }
    for (const std::int32_t v : {stage + 2, stage}) {
      for (const std::int32_t o : owners) {
        for (std::int32_t mb = 0; mb < 2; ++mb) out.push_back(act(B, v, mb, o));
      }
    }
    return out;
  };
  s.workers = {{{0, 0}, list(0, {0, 1})}, {{0, 1}, list(1, {0})}, {{1, 1}, list(1, {1})}};
  REQUIRE(show(validate(s)).empty());
  const Schedule lowered = lower(s);
  check_pairs(s, lowered);
  CHECK(show(validate(lowered)).empty());
}
