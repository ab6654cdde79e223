// The lowering pass: every SEND pairs with exactly one RECV on the worker that needs the data,
// checked here by scanning the lists (independently of the validator), on fault-free and
// re-routed schedules; a SEND follows its compute, a RECV is posted when its data is made;
// REDUCE_GRAD and OPT close every list; lowered schedules validate and, on a runtime network whose
// transfers take no time, run exactly as their compute-only form.
#include <doctest/doctest.h>

#include "tests/planner/test_helpers.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "planner/generators.hpp"
#include "planner/language/execution_graph.hpp"
#include "planner/language/lower.hpp"
#include "planner/language/timing.hpp"
#include "planner/language/validator.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/cost_graph.hpp"
#include "planner/timing/cost_model.hpp"

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
  // A SEND follows its compute with only communication in between, as torch's lowering appends it.
  const auto only_comms_between = [&](WorkerId id, std::size_t from, std::size_t to) {
    const auto it = std::find_if(lowered.workers.begin(), lowered.workers.end(),
                                 [&](const WorkerSchedule& w) { return w.id == id; });
    if (it == lowered.workers.end() || from >= to) return false;
    return std::all_of(it->actions.begin() + static_cast<std::ptrdiff_t>(from) + 1,
                       it->actions.begin() + static_cast<std::ptrdiff_t>(to),
                       [](const Action& a) { return is_comm(a.type); });
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
      CHECK(only_comms_between(self, here->index, where[0].index));  // after its F
    } else if (type == ActionType::kRecvF) {
      const Where* send = only(ActionType::kSendF, v - 1, mb, o);
      REQUIRE(send != nullptr);
      CHECK(send->worker == only(F, v - 1, mb, o)->worker);
      CHECK(where[0].index < here->index);  // before its F
    } else if (type == ActionType::kSendB) {
      const Where* recv = only(ActionType::kRecvB, v - 1, mb, o);
      REQUIRE(recv != nullptr);
      CHECK(recv->worker == backward(v - 1, mb, o)->worker);
      CHECK(only_comms_between(self, here->index, where[0].index));
    } else {
      const Where* send = only(ActionType::kSendB, v + 1, mb, o);
      REQUIRE(send != nullptr);
      CHECK(send->worker == backward(v + 1, mb, o)->worker);
      CHECK(where[0].index < here->index);
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
    CHECK(lowered.is_lowered());
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

namespace {

/// The schedules the lowering properties are checked on: every generator with uneven costs, and
/// ReCycle plans around failed workers.
std::vector<std::pair<Schedule, Costs>> lowering_corpus() {
  std::vector<std::pair<Schedule, Costs>> out;
  const StageCost uneven{3, 4, 2};
  for (const auto& [name, layout] :
       std::vector<std::pair<std::string, Layout>>{{"gpipe", {2, 3, 4, 1}},
                                                   {"1f1b", {3, 4, 9, 1}},
                                                   {"interleaved", {1, 3, 6, 3}},
                                                   {"zb-h1", {2, 4, 8, 1}},
                                                   {"zb-h2", {1, 4, 8, 1}}}) {
    const Costs costs = Costs::uniform(layout.virtual_stages(), uneven);
    out.emplace_back(generate(name, layout, costs), costs);
  }
  for (const std::vector<WorkerId>& failed :
       std::vector<std::vector<WorkerId>>{{{1, 2}}, {{0, 1}, {2, 3}}, {{0, 0}, {0, 1}, {2, 1}}}) {
    RecycleOptions options;
    options.layout = Layout{3, 4, 6, 1};
    options.failed = failed;
    options.model = CostModel::compute_only(Costs::uniform(4, {2, 3, 1}));
    out.emplace_back(plan_recycle(options).schedule, options.model.compute);
  }
  return out;
}

}  // namespace

TEST_CASE("lowering posts each RECV when its data is made, as torch's lowering does") {
  // torch's _add_send_recv appends a RECV to the reader's list when the sender's compute is
  // lowered; timed with the costs, that is right after the reader's last compute that has ended
  // by the moment the data is made (or before the compute that reads it, if that comes first).
  for (const auto& [compute, costs] : lowering_corpus()) {
    CAPTURE(compute.generator);
    const Schedule lowered = lower(compute, costs);
    const auto times = compute_timeline(compute, costs);
    REQUIRE(times.has_value());
    // When each (type, owner, virtual stage, micro-batch) compute ends, from the compute-only run.
    std::map<Key, recycle::Nanos> ends;
    for (std::size_t w = 0; w < compute.workers.size(); ++w) {
      const auto& actions = compute.workers[w].actions;
      for (std::size_t i = 0; i < actions.size(); ++i) {
        const Action& a = actions[i];
        const ActionType as = a.type == B ? I : a.type;  // a B makes the gradient as an I would
        ends[{as, a.virtual_stage, a.microbatch, a.owner}] = times->workers[w][i].end;
      }
    }
    for (std::size_t w = 0; w < lowered.workers.size(); ++w) {
      const auto& list = lowered.workers[w].actions;
      std::size_t computes = 0;  // computes of this worker before position p
      for (std::size_t p = 0; p < list.size(); ++p) {
        const Action& a = list[p];
        if (is_compute(a.type)) ++computes;
        if (a.type != ActionType::kRecvF && a.type != ActionType::kRecvB) continue;
        const bool forward = a.type == ActionType::kRecvF;
        const recycle::Nanos made =
            ends.at({forward ? F : I, a.virtual_stage + (forward ? -1 : 1), a.microbatch, a.owner});
        CAPTURE(to_token(a, lowered.workers[w].id.dp));
        const auto& mine = times->workers[w];
        // Every compute before it has ended by then...
        if (computes > 0) CHECK(mine[computes - 1].end <= made);
        // ...and the next compute has not, unless it is the one that reads the data.
        if (computes < mine.size()) {
          const Action& next = compute.workers[w].actions[computes];
          const bool reads = next.virtual_stage == a.virtual_stage &&
                             next.microbatch == a.microbatch && next.owner == a.owner &&
                             (forward ? next.type == F : (next.type == I || next.type == B));
          CHECK((reads || mine[computes].end > made));
        }
      }
    }
  }
}

TEST_CASE(
    "a lowered schedule on a runtime network whose transfers take no time runs as its "
    "compute-only form") {
  // The runtime network makes a transfer wait for both sides to be posted and every worker's
  // SEND/RECV wait in list order; posted where the lowering puts them, none of that delays a
  // compute when the bytes move in no time: every compute starts when the direct network starts
  // it, under either optimizer.
  recycle::profiles::HardwareSpec instant;  // bandwidth 0 means infinite; no latency
  for (const auto& [compute, costs] : lowering_corpus()) {
    for (const bool staggered : {false, true}) {
      CAPTURE(compute.generator);
      CAPTURE(staggered);
      Schedule direct = compute;
      direct.staggered_optimizer = staggered;
      const Schedule lowered = lower(direct, costs);
      CostModel model = CostModel::compute_only(costs);
      model.output_bytes.assign(static_cast<std::size_t>(compute.layout.virtual_stages()), 1000);
      model.cluster = Cluster(instant, 1, compute.layout.pp);
      REQUIRE_FALSE(model.cluster.free());
      GraphOptions options;
      options.network = Network::kRuntime;
      options.staggered_optimizer = staggered;
      const ExecutionGraph graph = timed_graph(lowered, model, options);
      REQUIRE(graph.ordered());
      std::vector<recycle::Nanos> start(static_cast<std::size_t>(graph.nodes())), end(start.size());
      graph.sweep({}, start, end);
      const auto expected = compute_timeline(direct, costs);
      REQUIRE(expected.has_value());
      for (std::size_t w = 0; w < lowered.workers.size(); ++w) {
        std::size_t k = 0;
        for (std::size_t i = 0; i < lowered.workers[w].actions.size(); ++i) {
          if (!is_compute(lowered.workers[w].actions[i].type)) continue;
          const auto node = static_cast<std::size_t>(
              graph.node(static_cast<std::int32_t>(w), static_cast<std::int32_t>(i)));
          CHECK(start[node] == expected->workers[w][k++].start);
        }
      }
    }
  }
}

TEST_CASE("when actions take no time the lowering still posts an order that cannot deadlock") {
  // Every compute ends at 0, so the moment data is made cannot order the transfers; the causal
  // order of the compute-only run does, on both sides of every pair.
  for (const auto& [compute, costs] : lowering_corpus()) {
    CAPTURE(compute.generator);
    const Costs zero = Costs::uniform(compute.layout.virtual_stages(), {0, 0, 0});
    const Schedule lowered = lower(compute, zero);
    CHECK(show(validate(lowered)).empty());
    (void)costs;
  }
}
