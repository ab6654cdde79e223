// The execution graph on the runtime network: rendezvous transfers, one communication stream per
// worker in list order, eager sends, the deadlock NCCL's ordering rule makes; and the steady-state
// period against hand-worked iterations. Every expected time is worked out in the comment above
// its check.
#include <doctest/doctest.h>

#include "tests/planner/test_helpers.hpp"

#include <string>
#include <vector>

#include "core/error.hpp"
#include "planner/language/execution_graph.hpp"
#include "planner/language/lower.hpp"
#include "planner/timing/cost_graph.hpp"
#include "planner/timing/cost_model.hpp"
#include "planner/timing/period.hpp"

namespace {

using namespace recycle::planner;
using namespace recycle::planner::testing;
using recycle::Nanos;

constexpr ActionType SEND_F = ActionType::kSendF;
constexpr ActionType RECV_F = ActionType::kRecvF;
constexpr ActionType SEND_B = ActionType::kSendB;
constexpr ActionType RECV_B = ActionType::kRecvB;

/// F, I, W per stage; every transfer takes `latency` ns (bandwidth infinite); free optimizer.
CostModel model(std::int32_t pp, StageCost cost, Nanos latency) {
  CostModel m = CostModel::compute_only(Costs::uniform(pp, cost));
  recycle::profiles::HardwareSpec hw;
  hw.intra_node_latency = hw.inter_node_latency = latency;
  m.cluster = Cluster(hw, 1, pp);
  return m;
}

struct Times {
  std::vector<Nanos> start, end;
};

Times first_iteration(const ExecutionGraph& graph) {
  Times t{std::vector<Nanos>(static_cast<std::size_t>(graph.nodes())),
          std::vector<Nanos>(static_cast<std::size_t>(graph.nodes()))};
  graph.sweep({}, t.start, t.end);
  return t;
}

/// The start and end of the first `type` action of worker `w`.
std::pair<Nanos, Nanos> at(const ExecutionGraph& graph, const Schedule& s, const Times& t,
                           std::int32_t w, ActionType type, std::int32_t microbatch = 0) {
  const auto& actions = s.workers[static_cast<std::size_t>(w)].actions;
  for (std::size_t i = 0; i < actions.size(); ++i) {
    if (actions[i].type != type ||
        (actions[i].microbatch >= 0 && actions[i].microbatch != microbatch))
      continue;
    const auto n = static_cast<std::size_t>(graph.node(w, static_cast<std::int32_t>(i)));
    return {t.start[n], t.end[n]};
  }
  FAIL("no such action");
  return {};
}

GraphOptions runtime(bool eager = false) {
  GraphOptions o;
  o.network = Network::kRuntime;
  o.eager_sends = eager;
  return o;
}

}  // namespace

TEST_CASE("runtime network, 1F1B P = 2, M = 1: each transfer waits for both sides, then 1 ns") {
  // F=3, B=6 (I=4, W=2), transfers 1 ns. Lowered: stage 0 F0 SEND_F0 RECV_B0 B0 ...; stage 1
  // RECV_F0 F0 B0 SEND_B0 .... Stage 1 posts RECV_F0 at 0; stage 0 posts SEND_F0 when F0 ends
  // (3): the transfer runs [3,4], stage 1's F0 [4,7], B0 [7,13]. Stage 0 posts RECV_B0 after its
  // stream's SEND_F0 completes (4); SEND_B0 is posted at 13: transfer [13,14], stage 0's B0
  // [14,20]. Eager sends change nothing here: every RECV is posted before its SEND.
  const Schedule s = lower(generate("1f1b", Layout{1, 2, 1, 1}));
  REQUIRE(s.workers[0].actions == std::vector<Action>{act(F, 0, 0),
                                                      act(SEND_F, 0, 0),
                                                      act(RECV_B, 0, 0),
                                                      act(B, 0, 0),
                                                      {ActionType::kReduceGrad, 0, -1, 0},
                                                      {ActionType::kOptimizer, 0, -1, 0}});
  for (const bool eager : {false, true}) {
    CAPTURE(eager);
    const ExecutionGraph g = timed_graph(s, model(2, {3, 4, 2}, 1), runtime(eager));
    REQUIRE(g.ordered());
    const Times t = first_iteration(g);
    CHECK(at(g, s, t, 1, RECV_F).first == 0);
    const std::int32_t transfer = g.transfer_of(g.node(0, 1));  // of 0SEND_F0
    REQUIRE(transfer >= 0);
    CHECK(t.start[static_cast<std::size_t>(transfer)] == 3);
    CHECK(t.end[static_cast<std::size_t>(transfer)] == 4);
    CHECK(at(g, s, t, 1, F) == std::pair<Nanos, Nanos>{4, 7});
    CHECK(at(g, s, t, 1, B) == std::pair<Nanos, Nanos>{7, 13});
    CHECK(at(g, s, t, 0, RECV_B).first == 4);
    CHECK(at(g, s, t, 0, B) == std::pair<Nanos, Nanos>{14, 20});
  }
}

TEST_CASE(
    "runtime network: two workers that order their transfers differently deadlock under "
    "rendezvous, and run with eager sends") {
  // M = 2, F = 1, B = 2, transfers 1 ns. Stage 0 posts SEND_F1 before RECV_B0; stage 1 posts
  // SEND_B0 before RECV_F1. Rendezvous: SEND_F1 waits for RECV_F1, which waits on stage 1's
  // stream for SEND_B0, which waits for RECV_B0, which waits on stage 0's stream for SEND_F1.
  Schedule s;
  s.layout = Layout{1, 2, 2, 1};
  s.workers = {{{0, 0},
                {act(F, 0, 0), act(SEND_F, 0, 0), act(F, 0, 1), act(SEND_F, 0, 1),
                 act(RECV_B, 0, 0), act(B, 0, 0), act(RECV_B, 0, 1), act(B, 0, 1)}},
               {{0, 1},
                {act(RECV_F, 1, 0), act(F, 1, 0), act(B, 1, 0), act(SEND_B, 1, 0),
                 act(RECV_F, 1, 1), act(F, 1, 1), act(B, 1, 1), act(SEND_B, 1, 1)}}};
  const CostModel m = model(2, {1, 1, 1}, 1);
  CHECK_FALSE(timed_graph(s, m, runtime()).ordered());
  // Eager: a transfer starts when its SEND is posted and holds the sender's stream until it
  // arrives; a RECV completes when it is posted and the data is there.
  //  stage 0: F0 [0,1]; SEND_F0 posted 1, arrives 2; F1 [1,2]; SEND_F1 posted 2 (stream free at
  //           2), arrives 3; RECV_B0 posted 3 (after SEND_F1 on the stream).
  //  stage 1: RECV_F0 posted 0, done 2; F0 [2,3]; B0 [3,5]; SEND_B0 posted 5, arrives 6;
  //           RECV_F1 posted 6 (after SEND_B0), done 6; F1 [6,7]; B1 [7,9]; SEND_B1 posted 9,
  //           arrives 10.
  //  stage 0: RECV_B0 done 6; B0 [6,8]; RECV_B1 posted 8 (after B0), done 10; B1 [10,12].
  const ExecutionGraph g = timed_graph(s, m, runtime(true));
  REQUIRE(g.ordered());
  const Times t = first_iteration(g);
  CHECK(at(g, s, t, 1, RECV_F, 1) == std::pair<Nanos, Nanos>{6, 6});
  CHECK(at(g, s, t, 1, F, 1) == std::pair<Nanos, Nanos>{6, 7});
  CHECK(at(g, s, t, 0, RECV_B, 0).first == 3);
  CHECK(at(g, s, t, 0, B, 0) == std::pair<Nanos, Nanos>{6, 8});
  CHECK(at(g, s, t, 0, RECV_B, 1).first == 8);
  CHECK(at(g, s, t, 0, B, 1) == std::pair<Nanos, Nanos>{10, 12});
}

TEST_CASE("runtime network: a worker's SEND/RECV wait on its one stream, in list order") {
  // GPipe P = 2, M = 2, F = 1, B = 2, transfers 3 ns (longer than F). Lowered with unit costs as
  // torch lowers it: stage 0 F0 SEND_F0 F1 SEND_F1 ...; stage 1 RECV_F0 F0 RECV_F1 F1 ... (the
  // second activation is made at step 2, when stage 1's F0 has ended).
  //   stage 0: F0 [0,1], SEND_F0 posted 1, transfer [1,4]; F1 [1,2], but SEND_F1 waits for the
  //            stream: posted 4.
  //   stage 1: RECV_F0 posted 0; F0 [4,5]; RECV_F1 posted when F0 ends, 5: transfer [5,8];
  //            F1 [8,9].
  const Schedule s = lower(generate("gpipe", Layout{1, 2, 2, 1}));
  REQUIRE(s.workers[1].actions[2] == act(RECV_F, 1, 1));
  const ExecutionGraph g = timed_graph(s, model(2, {1, 1, 1}, 3), runtime());
  const Times t = first_iteration(g);
  CHECK(at(g, s, t, 0, SEND_F, 1).first == 4);
  CHECK(at(g, s, t, 1, F, 0) == std::pair<Nanos, Nanos>{4, 5});
  CHECK(at(g, s, t, 1, RECV_F, 1).first == 5);
  CHECK(at(g, s, t, 1, F, 1) == std::pair<Nanos, Nanos>{8, 9});
}

TEST_CASE(
    "a SEND with no RECV, or a RECV no SEND delivers, cannot be timed on the runtime "
    "network") {
  Schedule s = lower(generate("1f1b", Layout{1, 2, 1, 1}));
  s.workers[1].actions.erase(s.workers[1].actions.begin());  // 1RECV_F0
  CHECK_THROWS_WITH_AS((void)timed_graph(s, model(2, {1, 1, 1}, 1), runtime(), "f.json"),
                       "f.json: worker (0,0) action 0SEND_F0: no matching 1RECV_F0 on worker (0,1)",
                       recycle::InputError);
}

TEST_CASE("steady state: barrier against staggered optimizer, timed by hand") {
  // GPipe P = 2, M = 1, F = 1, B = 1 (I = 1, W = 0), optimizer 0 on stage 0 and 10 on stage 1,
  // free network. Barrier: F + B (stage 1) + B (stage 0) + 10 = 13 per iteration, the first
  // ending at 14 (stage 1's OPT starts at 4 after stage 0's B... [3,4]).
  // Staggered: stage 1 steps as soon as its own B is done: F + B + 10 = 12 per iteration.
  CostModel m = CostModel::compute_only(Costs::uniform(2, {1, 1, 0}));
  m.compute.optimizer = {0, 10};
  Schedule s = generate("gpipe", Layout{1, 2, 1, 1});
  const auto barrier = steady_state(s, m);
  REQUIRE(barrier.has_value());
  CHECK(barrier->makespan == 14);
  CHECK(barrier->period == 13);
  CHECK(barrier->settled);
  s.staggered_optimizer = true;
  const auto staggered = steady_state(s, m);
  REQUIRE(staggered.has_value());
  CHECK(staggered->makespan == 13);
  CHECK(staggered->period == 12);
  CHECK(staggered->settled);
}

TEST_CASE(
    "steady state with a staggered optimizer: a stage's long W overlaps the next "
    "iteration elsewhere") {
  // P = 2, M = 1, split backward: stage 0 F I W = 1 1 1, stage 1 F I W = 1 1 10; free network,
  // free optimizer. One iteration: stage 0 F [0,1]; stage 1 F [1,2] I [2,3] W [3,13]; stage 0
  // I [3,4] W [4,5]. Makespan 13.
  //  barrier: every iteration waits for the slowest stage: period 13.
  //  staggered: stage 1 repeats F I W = 12 on its own (its F waits for its OPT, stage 0's F is
  //  ready long before); stage 0's chain F F I I W = 5. Period max(12, 5) = 12.
  Schedule s;
  s.layout = Layout{1, 2, 1, 1};
  s.workers = {{{0, 0}, {act(F, 0, 0), act(I, 0, 0), act(W, 0, 0)}},
               {{0, 1}, {act(F, 1, 0), act(I, 1, 0), act(W, 1, 0)}}};
  Costs costs;
  costs.virtual_stages = {{1, 1, 1}, {1, 1, 10}};
  const CostModel m = CostModel::compute_only(costs);
  for (const bool staggered : {false, true}) {
    CAPTURE(staggered);
    s.staggered_optimizer = staggered;
    const auto st = steady_state(s, m);
    REQUIRE(st.has_value());
    CHECK(st->makespan == 13);
    CHECK(st->period == (staggered ? 12 : 13));
    CHECK(st->settled);
  }
}

TEST_CASE(
    "reorder: the walk's order follows every edge whatever the hint, and a cycle is refused") {
  // P = 2, M = 2, split backward, F = I = W = 1, free network, barrier. Stage 1 first runs
  // F0 I0 W0 F1 I1 W1; reordered to F0 F1 I0 W0 I1 W1 it must time as the schedule listed that
  // way; reordered to I0 F0 ... its I0 waits for its own later F0: a cycle.
  const auto make = [](std::vector<Action> stage1) {
    Schedule s;
    s.layout = Layout{1, 2, 2, 1};
    s.workers = {
        {{0, 0},
         {act(F, 0, 0), act(F, 0, 1), act(I, 0, 0), act(W, 0, 0), act(I, 0, 1), act(W, 0, 1)}},
        {{0, 1}, std::move(stage1)}};
    return s;
  };
  const Schedule listed =
      make({act(F, 1, 0), act(I, 1, 0), act(W, 1, 0), act(F, 1, 1), act(I, 1, 1), act(W, 1, 1)});
  const Schedule wanted =
      make({act(F, 1, 0), act(F, 1, 1), act(I, 1, 0), act(W, 1, 0), act(I, 1, 1), act(W, 1, 1)});
  const CostModel m = CostModel::compute_only(Costs::uniform(2, {1, 1, 1}));
  ExecutionGraph graph = timed_graph(listed, m, GraphOptions{});
  const auto node = [&](std::int32_t i) { return graph.node(1, i); };
  // The listed positions 0 F0, 1 I0, 2 W0, 3 F1, 4 I1, 5 W1.
  const std::vector<std::int32_t> reordered{node(0), node(3), node(1), node(2), node(4), node(5)};
  graph.reorder(1, reordered);
  std::vector<std::int32_t> reversed(static_cast<std::size_t>(graph.nodes()));
  for (std::size_t k = 0; k < reversed.size(); ++k)
    reversed[k] = graph.nodes() - 1 - static_cast<std::int32_t>(k);
  for (const bool hinted : {false, true}) {
    CAPTURE(hinted);
    std::vector<std::int32_t> order;
    REQUIRE(graph.topological_order(
        order, hinted ? std::span<const std::int32_t>(reversed) : std::span<const std::int32_t>{}));
    REQUIRE(order.size() == static_cast<std::size_t>(graph.nodes()));
    std::vector<std::int32_t> at(order.size(), -1);
    for (std::size_t k = 0; k < order.size(); ++k) at[static_cast<std::size_t>(order[k])] = k;
    for (std::int32_t v = 0; v < graph.nodes(); ++v) {
      CHECK(at[static_cast<std::size_t>(v)] >= 0);
      for (std::int32_t e = graph.first_edge(v); e < graph.first_edge(v + 1); ++e) {
        const ExecutionGraph::Edge edge = graph.edge(e);
        if (edge.distance == 0) CHECK(at[static_cast<std::size_t>(edge.from)] < at[v]);
      }
    }
  }
  // By hand, the order wanted: stage 0 F0 [0,1] F1 [1,2]; stage 1 F0 [1,2] F1 [2,3] I0 [3,4]
  // W0 [4,5] I1 [5,6] W1 [6,7]; stage 0 I0 [4,5] W0 [5,6] I1 [6,7] W1 [7,8]: makespan 8.
  SteadyStateTrace trace;
  trace.order = reversed;  // a hint that is no topological order
  const auto reordered_state = steady_state(graph, kMaxSteadyStateIterations, &trace);
  const auto wanted_state = steady_state(wanted, m);
  REQUIRE(reordered_state.has_value());
  REQUIRE(wanted_state.has_value());
  CHECK(reordered_state->makespan == 8);
  CHECK(wanted_state->makespan == 8);
  CHECK(reordered_state->period == wanted_state->period);

  graph.reorder(1, std::vector<std::int32_t>{node(1), node(0), node(2), node(3), node(4), node(5)});
  std::vector<std::int32_t> order;
  CHECK_FALSE(graph.topological_order(order, trace.order));
  CHECK_FALSE(steady_state(graph, kMaxSteadyStateIterations, &trace).has_value());
}
