// The iteration simulator against hand-worked timelines and the schedule formulas. Every expected
// number is worked out in the comment above its check.
#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "planner/generators.hpp"
#include "planner/language/lower.hpp"
#include "planner/recycle_planner.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"

namespace {

using namespace recycle;
using planner::ActionType;
using planner::CostModel;
using planner::Layout;
using planner::StageCost;
using sim::SimOptions;

constexpr Nanos kSecond = kNanosPerSecond;

sim::SimRun run_generator(const std::string& name, Layout layout, CostModel model,
                          SimOptions options = {}) {
  planner::GeneratorOptions gen;
  gen.layout = layout;
  gen.model = planner::CostModel::compute_only(model.compute);
  return sim::simulate(planner::generate_fault_free(name, gen), std::move(model),
                       std::move(options));
}

CostModel uniform(const Layout& layout, Nanos f, Nanos i, Nanos w) {
  return CostModel::compute_only(
      planner::Costs::uniform(layout.virtual_stages(), StageCost{f, i, w}));
}

/// A network of one link kind: `bandwidth` bytes/s, `latency`; every worker on its own node when
/// `own_nodes`, else all on one big node.
planner::Cluster network(BytesPerSecond bandwidth, Nanos latency, std::int32_t pp,
                         bool own_nodes = false) {
  profiles::HardwareSpec hw;
  hw.gpus_per_node = own_nodes ? 1 : 1024;
  hw.intra_node_bandwidth = hw.inter_node_bandwidth = bandwidth;
  hw.intra_node_latency = hw.inter_node_latency = latency;
  return planner::Cluster(hw, 1, pp);
}

/// The first `n` actions of a worker's lowered list, as tokens.
std::string tokens(const sim::SimRun& run, std::size_t worker, std::size_t n) {
  const auto& ws = run.schedule.workers[worker];
  std::string out;
  for (std::size_t pc = 0; pc < n && pc < ws.actions.size(); ++pc) {
    out += (pc ? " " : "") + planner::to_token(ws.actions[pc], ws.id.dp);
  }
  return out;
}

const sim::ActionRecord& record_of(const sim::SimRun& run, std::size_t worker,
                                   const std::string& token, std::int32_t iteration = 0) {
  const auto& ws = run.schedule.workers[worker];
  for (std::size_t pc = 0; pc < ws.actions.size(); ++pc) {
    if (planner::to_token(ws.actions[pc], ws.id.dp) == token)
      return run.timeline.at(worker, iteration, pc);
  }
  FAIL("no action " << token << " on worker " << worker);
  return run.timeline.actions.front();
}

}  // namespace

TEST_CASE("1F1B and GPipe with uniform costs take (m + p - 1)(F + I + W) per iteration") {
  struct Case {
    std::int32_t p, m;
    Nanos f, i, w;
  };
  for (const Case c : {Case{4, 8, 1, 1, 1}, Case{4, 8, 3, 2, 1}, Case{2, 2, 5, 7, 3},
                       Case{8, 16, 10, 20, 5}, Case{3, 1, 4, 4, 4}}) {
    for (const std::string name : {"1f1b", "gpipe"}) {
      CAPTURE(name);
      CAPTURE(c.p);
      CAPTURE(c.m);
      const Layout layout{1, c.p, c.m, 1};
      const Nanos expected = (c.m + c.p - 1) * (c.f + c.i + c.w) * kSecond;
      const auto run =
          run_generator(name, layout, uniform(layout, c.f * kSecond, c.i * kSecond, c.w * kSecond));
      const auto m = sim::compute_metrics(run);
      CHECK(m.iteration_time == expected);
      // No communication and no optimizer cost: the iterations run back to back.
      CHECK(m.iteration_ends.size() == 4);
      CHECK(m.iteration_ends[0] == expected);
      CHECK(m.iteration_ends[3] == 4 * expected);
      // Busy: m micro-batches of F + I + W on each of p workers; the rest is the classic bubble
      // (p - 1) / (m + p - 1).
      for (const auto& w : m.workers) CHECK(w.busy == c.m * (c.f + c.i + c.w) * kSecond);
      CHECK(m.bubble_fraction ==
            doctest::Approx(double(c.p - 1) / double(c.m + c.p - 1)).epsilon(1e-12));
      // With the barrier the last iteration starts when the previous one ends: its critical path
      // spans the whole iteration.
      CHECK(m.critical_path_length == expected);
      // Throughput: m samples (micro-batch size 1) per iteration.
      CHECK(m.throughput == doctest::Approx(double(c.m) / (double(expected) / 1e9)));
    }
  }
}

TEST_CASE(
    "ZB-H1 with uniform costs matches the Zero Bubble paper: m(F+I+W) + (p-1)(F+I-W), m >= p") {
  struct Case {
    std::int32_t p, m;
    Nanos f, i, w;
  };
  for (const Case c : {Case{4, 8, 1, 1, 1}, Case{4, 4, 1, 1, 1}, Case{8, 16, 1, 1, 1},
                       Case{2, 5, 1, 1, 1}, Case{4, 12, 3, 3, 2}, Case{6, 8, 2, 2, 2}}) {
    CAPTURE(c.p);
    CAPTURE(c.m);
    CAPTURE(c.f);
    const Layout layout{1, c.p, c.m, 1};
    const auto run = run_generator("zb-h1", layout, uniform(layout, c.f, c.i, c.w));
    const Nanos expected = c.m * (c.f + c.i + c.w) + (c.p - 1) * (c.f + c.i - c.w);
    CHECK(sim::compute_metrics(run).iteration_time == expected);
  }
}

TEST_CASE("a send between two workers costs latency + bytes / bandwidth of the link it uses") {
  // pp 2, one micro-batch: stage 0 F (1 ms), send 1 MB, stage 1 F (1 ms) and B (2 ms), send the
  // gradient (1 MB) back, stage 0 B (2 ms). Intra-node link: 1 GB/s + 10 us = 1.01 ms per send;
  // inter-node: 100 MB/s + 100 us = 10.1 ms per send.
  const Layout layout{1, 2, 1, 1};
  profiles::Profile p;
  p.stages.assign(2,
                  profiles::StageProfile{1'000'000, 1'000'000, 1'000'000, 0, 0, 1'000'000, 0, 0});
  p.hardware = {8, 1e9, 1e8, 10'000, 100'000, 0};
  const Nanos f = 1'000'000, b = 2'000'000;

  SUBCASE("both workers on one node (TP 1: GPUs 0 and 1)") {
    const auto run = run_generator("1f1b", layout, CostModel::from_profile(p, layout, "p.json"),
                                   {.iterations = 1});
    const Nanos c = 10'000 + 1'000'000;
    CHECK(record_of(run, 1, "1F0").start == f + c);
    CHECK(run.timeline.transfers.at(0).start == f);
    CHECK(run.timeline.transfers.at(0).end == f + c);
    CHECK(sim::compute_metrics(run).iteration_time == 2 * f + 2 * b + 2 * c);
  }
  SUBCASE("one node each (TP 8 on 8-GPU nodes)") {
    p.tensor_parallel = 8;
    const auto run = run_generator("1f1b", layout, CostModel::from_profile(p, layout, "p.json"),
                                   {.iterations = 1});
    const Nanos c = 100'000 + 10'000'000;
    CHECK(sim::compute_metrics(run).iteration_time == 2 * f + 2 * b + 2 * c);
  }
}

TEST_CASE("a ring all-reduce costs 2(n-1)/n * bytes / bandwidth + 2(n-1) * latency") {
  // dp 4, pp 1, one micro-batch: F (1 ms), B (2 ms), REDUCE_GRAD of 4 MB over 4 peers, OPT 0.5 ms.
  const Layout layout{4, 1, 1, 1};
  profiles::Profile p;
  p.stages.assign(
      1, profiles::StageProfile{1'000'000, 1'000'000, 1'000'000, 500'000, 0, 0, 4'000'000, 0});
  p.hardware = {8, 1e9, 1e8, 10'000, 100'000, 0};
  SUBCASE("inside one node: 2*3/4 * 4 MB / 1 GB/s = 6 ms, + 6 * 10 us") {
    const auto run = run_generator("gpipe", layout, CostModel::from_profile(p, layout, "p.json"),
                                   {.iterations = 1});
    const Nanos all_reduce = 6'000'000 + 60'000;
    REQUIRE(run.timeline.collectives.size() == 1);
    CHECK(run.timeline.collectives[0].start == 3'000'000);
    CHECK(run.timeline.collectives[0].end == 3'000'000 + all_reduce);
    CHECK(sim::compute_metrics(run).iteration_time == 3'000'000 + all_reduce + 500'000);
  }
  SUBCASE(
      "across nodes (2 GPUs per node, so two rings side by side, each at 100 MB/s): "
      "2*3/4 * 4 MB / 200 MB/s = 30 ms, + 6 * 100 us") {
    p.hardware.gpus_per_node = 2;
    const auto run = run_generator("gpipe", layout, CostModel::from_profile(p, layout, "p.json"),
                                   {.iterations = 1});
    CHECK(sim::compute_metrics(run).iteration_time == 3'000'000 + 30'000'000 + 600'000 + 500'000);
  }
  SUBCASE("one peer per node: one ring at 100 MB/s, 2*3/4 * 4 MB / 100 MB/s = 60 ms") {
    p.hardware.gpus_per_node = 1;
    const auto run = run_generator("gpipe", layout, CostModel::from_profile(p, layout, "p.json"),
                                   {.iterations = 1});
    CHECK(sim::compute_metrics(run).iteration_time == 3'000'000 + 60'000'000 + 600'000 + 500'000);
  }
  SUBCASE("one live peer: nothing to reduce") {
    const Layout one{1, 1, 1, 1};
    const auto run =
        run_generator("gpipe", one, CostModel::from_profile(p, one, "p.json"), {.iterations = 1});
    CHECK(sim::compute_metrics(run).iteration_time == 3'000'000 + 500'000);
  }
}

TEST_CASE(
    "rendezvous transfers wait for the receiver, eager sends show only the first and last "
    "hops") {
  // GPipe, pp 2, m 4, F = 1000 ns, B = 2000 ns (I = W = 1000), each send c ns (1 byte/ns, no
  // latency), every worker on its own node. The lowering (planner/language/lower.hpp) posts each
  // RECV before the receiver's first compute that does not end before the data is made, in the run
  // on the direct network (transfers take c and never queue); the runtime network then runs the
  // transfers one at a time per worker, each when both sides have posted.
  const Layout layout{1, 2, 4, 1};
  const Nanos f = 1000, b = 2000;
  const auto model = [&](Bytes bytes) {
    CostModel m = uniform(layout, f, 1000, 1000);
    m.output_bytes = {bytes, bytes};
    m.cluster = network(1e9, 0, 2, true);
    return m;
  };
  SUBCASE("c = 500, rendezvous: receives posted in time, the sends never wait") {
    // Direct run: stage 0's Fk ends at (k+1)F; stage 1's Fk runs [1500 + kF, 2500 + kF], its Bk
    // ends at 7500 + kB. So stage 1 lists RECV_F0 RECV_F1 F0 RECV_F2 F1 RECV_F3 F2 F3, and the
    // transfer of Fk runs [(k+1)F, (k+1)F + c] as soon as stage 0 sends it: stage 1's F3 starts
    // at 4F + c = F + c + 3F.
    const Nanos c = 500;
    const auto run = run_generator("gpipe", layout, model(c), {.iterations = 1});
    CHECK(tokens(run, 1, 8) == "1RECV_F0 1RECV_F1 1F0 1RECV_F2 1F1 1RECV_F3 1F2 1F3");
    CHECK(record_of(run, 1, "1F3").start == f + c + 3 * f);
    // Stage 0's Bk ends at 10000 + kB in the direct run: it lists RECV_B0 RECV_B1 B0 RECV_B2 B1
    // RECV_B3 B2 B3. Gradient k leaves when stage 1's Bk ends (7500 + kB) and stage 0 has posted
    // it (by 8000 + (k - 2)B at the latest): stage 0's Bk runs [8000 + kB, 10000 + kB], B3 ends
    // at 16000, the eager bound (4 + 2 - 1)(F + B) + 2(2 - 1)c.
    CHECK(sim::compute_metrics(run).iteration_time == 16000);
    CHECK(sim::compute_metrics(run).iteration_time == (4 + 2 - 1) * (f + b) + 2 * (2 - 1) * c);
  }
  SUBCASE("c = 500, eager sends: every send overlaps the sender's next F; one hop each way") {
    // A transfer starts when its SEND is posted; the RECV completes when the data is there.
    const Nanos c = 500;
    const auto run =
        run_generator("gpipe", layout, model(c), {.iterations = 1, .eager_sends = true});
    CHECK(record_of(run, 1, "1F3").start == f + c + 3 * f);
    CHECK(sim::compute_metrics(run).iteration_time == (4 + 2 - 1) * (f + b) + 2 * (2 - 1) * c);
  }
  SUBCASE("c = 1500 > F, rendezvous: the forwards queue on stage 0's stream and stage 1 waits") {
    // Direct run: stage 1's Fk runs [2500 + kF, 3500 + kF], so it posts RECV_F0..RECV_F2 before
    // F0 and RECV_F3 after F0. Stage 0's stream sends one at a time: [1000, 2500], [2500, 4000],
    // [4000, 5500], [5500, 7000]; stage 1's F1 runs [4000, 5000], F2 [5500, 6500], F3 at 7000.
    const Nanos c = 1500;
    const auto run = run_generator("gpipe", layout, model(c), {.iterations = 1});
    CHECK(run.timeline.transfers.at(3).start == 5500);
    CHECK(record_of(run, 1, "1F3").start == 7000);
    // Stage 1's Bs run [8000, 16000]. In the direct run stage 1's Bk ends at 8500 + kB and stage
    // 0's Bk at 12000 + kB, so stage 0 lists RECV_B0 RECV_B1 B0 RECV_B2 B1 RECV_B3 B2 B3. The
    // gradients run [10000, 11500], [12000, 13500], [14000, 15500], [16000, 17500] (each when
    // stage 1's B ends; stage 0 has posted by then); stage 0's B3 runs [17500, 19500].
    CHECK(sim::compute_metrics(run).iteration_time == 19500);
  }
}

TEST_CASE("the optimizer barrier against a staggered optimizer") {
  // GPipe pp 2, m 1, F = 1 s, B = 1 s (I = 1, W = 0), optimizer 0 s on stage 0 and 10 s on stage 1.
  //  barrier: stage 1's OPT starts only when stage 0 ends its B, and stage 1's next F waits for
  //    that OPT: per iteration F + B (stage 1) + B (stage 0) + 10 = 13 s.
  //  staggered: stage 1 steps as soon as its own B is done: per iteration F + B + 10 = 12 s
  //    (stage 1 is the bottleneck; stage 0's work hides in its OPT).
  const Layout layout{1, 2, 1, 1};
  CostModel model = uniform(layout, kSecond, kSecond, 0);
  model.compute.optimizer = {0, 10 * kSecond};
  const auto barrier = run_generator("gpipe", layout, model, {.iterations = 3});
  CHECK(barrier.timeline.iteration_ends ==
        std::vector<Nanos>{14 * kSecond, 27 * kSecond, 40 * kSecond});
  CHECK(sim::compute_metrics(barrier).iteration_time == 13 * kSecond);
  const auto stagger =
      run_generator("gpipe", layout, model, {.iterations = 3, .staggered_optimizer = true});
  CHECK(stagger.timeline.iteration_ends ==
        std::vector<Nanos>{13 * kSecond, 25 * kSecond, 37 * kSecond});
  CHECK(sim::compute_metrics(stagger).iteration_time == 12 * kSecond);
  // Under the barrier both OPTs of iteration 1 start at 4 s, when stage 0 reaches its OPT.
  CHECK(record_of(barrier, 1, "1OPT").start == 4 * kSecond);
  CHECK(record_of(stagger, 1, "1OPT").start == 3 * kSecond);
}

TEST_CASE("metrics: samples, peak in-flight micro-batches and activation bytes") {
  // 1F1B pp 4 m 8 dp 2: stage s holds pp - s micro-batches at its peak (warm-up pp - s - 1, then
  // one more F before the first B). Samples: dp * m micro-batches of size 3.
  const Layout layout{2, 4, 8, 1};
  CostModel model = uniform(layout, 1, 1, 1);
  model.activation_bytes = {100, 100, 100, 100};
  const auto run = run_generator("1f1b", layout, model, {.iterations = 2});
  const auto m = sim::compute_metrics(run, 3);
  CHECK(m.microbatches_per_iteration == 16);
  CHECK(m.samples_per_iteration == 48);
  for (const auto& w : m.workers) {
    CAPTURE(w.id.stage);
    CHECK(w.peak_inflight_chunks == 4 - w.id.stage);
    CHECK(w.peak_inflight_microbatches == 4 - w.id.stage);
    CHECK(w.peak_activation_bytes == 100 * (4 - w.id.stage));
  }
}

TEST_CASE("interleaved 1F1B: one chunk counts 1/V micro-batch") {
  // Megatron-LM's interleaved schedule, pp 2, V 2, m 4: warm-up on stage 0 is (pp - 1) * 2 +
  // (V - 1) * pp = 4 chunk forwards, then one more F before the first B: 5 chunks = 2.5
  // micro-batches.
  const Layout layout{1, 2, 4, 2};
  const auto run = run_generator("interleaved", layout, uniform(layout, 1, 1, 1));
  const auto m = sim::compute_metrics(run);
  CHECK(m.workers[0].peak_inflight_chunks == 5);
  CHECK(m.workers[0].peak_inflight_microbatches == 2.5);
  CHECK(m.microbatches_per_iteration == 4);
  // Work per worker per iteration: 4 micro-batches x 2 chunks x (F + I + W) = 24 ns.
  CHECK(m.workers[0].busy == 24);
}

TEST_CASE("a compute-only schedule is lowered before it runs") {
  const Layout layout{1, 3, 3, 1};
  planner::GeneratorOptions gen;
  gen.layout = layout;
  const auto compute = planner::generate_fault_free("1f1b", gen);
  CHECK_FALSE(compute.is_lowered());
  const auto run = sim::simulate(compute, uniform(layout, 1, 1, 1), {});
  CHECK(run.schedule.is_lowered());
  const auto expected = planner::lower(compute);
  for (std::size_t w = 0; w < expected.workers.size(); ++w) {
    CHECK(run.schedule.workers[w].actions == expected.workers[w].actions);
  }
}

TEST_CASE("the critical path follows the causes back through transfers") {
  // 1F1B pp 2 m 1 with 100 ns sends: F0 (stage 0) -> SEND_F0 -> transfer -> F0, B0 (stage 1) ->
  // SEND_B0 -> transfer -> B0 (stage 0) -> REDUCE_GRAD -> OPT. The RECVs were posted long before
  // their data came, so they are not on it.
  const Layout layout{1, 2, 1, 1};
  CostModel model = uniform(layout, 10, 10, 10);
  model.output_bytes = {100, 100};
  model.cluster = network(1e9, 0, 2, true);
  const auto run = run_generator("1f1b", layout, model, {.iterations = 1});
  const auto m = sim::compute_metrics(run);
  std::vector<std::string> tokens;
  for (const auto& step : m.critical_path) tokens.push_back(step.token);
  CHECK(tokens == std::vector<std::string>{"0F0", "0SEND_F0", "0SEND_F0", "1F0", "1B0", "1SEND_B0",
                                           "1SEND_B0", "0B0", "0REDUCE_GRAD", "0OPT"});
  CHECK(m.critical_path[2].kind == sim::CriticalStep::Kind::kTransfer);
  CHECK(m.critical_path[6].kind == sim::CriticalStep::Kind::kTransfer);
  CHECK(m.critical_path[8].kind == sim::CriticalStep::Kind::kAllReduce);
  // Each step starts when the one before it ended: a SEND is posted at once (F0 ends at 10, its
  // transfer runs 10-110), so its step ends where its transfer starts.
  CHECK(m.critical_path[1].start == 10);
  CHECK(m.critical_path[1].end == 10);
  CHECK(m.critical_path[2].start == 10);
  CHECK(m.critical_path[2].end == 110);
  for (std::size_t k = 1; k < m.critical_path.size(); ++k) {
    CAPTURE(k);
    CHECK(m.critical_path[k].start == m.critical_path[k - 1].end);
  }
  // 10 (F) + 100 (send) + 10 (F) + 20 (B) + 100 (send) + 20 (B) = 260 ns.
  CHECK(m.critical_path_length == 260);
  CHECK(m.iteration_time == 260);
}

TEST_CASE("schedules the simulator cannot run are input errors naming the schedule") {
  const Layout layout{1, 2, 1, 1};
  planner::GeneratorOptions gen;
  gen.layout = layout;
  const auto lowered = planner::lower(planner::generate_fault_free("1f1b", gen));
  const CostModel model = uniform(layout, 1, 1, 1);
  SimOptions options;
  options.source = "s.json";

  SUBCASE("a RECV no SEND delivers") {
    auto s = lowered;
    std::erase_if(s.workers[0].actions, [](const auto& a) { return a.type == ActionType::kSendF; });
    CHECK_THROWS_WITH_AS((void)sim::simulate(s, model, options),
                         "s.json: worker (0,1) action 1RECV_F0: no SEND delivers it", InputError);
  }
  SUBCASE("a SEND without its RECV") {
    auto s = lowered;
    std::erase_if(s.workers[1].actions, [](const auto& a) { return a.type == ActionType::kRecvF; });
    CHECK_THROWS_WITH_AS(
        (void)sim::simulate(s, model, options),
        "s.json: worker (0,0) action 0SEND_F0: no matching 1RECV_F0 on worker (0,1)", InputError);
  }
  SUBCASE("a deadlock: stage 0 waits for the gradient before it sends the activation") {
    auto s = lowered;  // stage 0: 0F0 0SEND_F0 0RECV_B0 0B0 ... -> 0F0 0RECV_B0 0SEND_F0 0B0 ...
    std::swap(s.workers[0].actions[1], s.workers[0].actions[2]);
    CHECK_THROWS_WITH_AS(
        (void)sim::simulate(s, model, options),
        "s.json: the schedule deadlocks: worker (0,0) action 0RECV_B0 of iteration 1 never "
        "completes (1 more workers stuck); `recycle plan --check` says why",
        InputError);
  }
  SUBCASE("zero iterations") {
    options.iterations = 0;
    CHECK_THROWS_AS((void)sim::simulate(lowered, model, options), InputError);
  }
}

TEST_CASE(
    "a ReCycle plan around a failed worker runs, with either optimizer, and trains every "
    "micro-batch") {
  // dp 3 x pp 4, m 8, worker (1,2) failed: its micro-batches run on (0,2) and (2,2).
  const Layout layout{3, 4, 8, 1};
  planner::RecycleOptions options;
  options.layout = layout;
  options.failed = {{1, 2}};
  const auto plan = planner::plan_recycle(options);
  REQUIRE(plan.feasible);
  for (const bool staggered : {false, true}) {
    CAPTURE(staggered);
    const auto run = sim::simulate(plan.schedule, uniform(layout, 1, 1, 1),
                                   {.iterations = 3, .staggered_optimizer = staggered});
    const auto m = sim::compute_metrics(run);
    CHECK(run.schedule.workers.size() == 11);
    CHECK(m.microbatches_per_iteration == 3 * 8);
    // Every pipeline's every micro-batch passes every stage once: 3 x 4 x 8 x (F + I + W) = 288
    // busy in all; the failed worker's share lands on its two stage-2 peers.
    Nanos total = 0, busiest = 0;
    for (const auto& w : m.workers) {
      total += w.busy;
      busiest = std::max(busiest, w.busy);
    }
    CHECK(total == 288);
    CHECK(m.workers[2].busy + m.workers[9].busy == 3 * 8 * 3);  // (0,2) and (2,2): 8 + 8 + 8
    // Nothing is faster than the busiest worker's work, nor than the fault-free 1F1B makespan.
    CHECK(m.iteration_time >= busiest);
    CHECK(m.iteration_time >= (8 + 4 - 1) * 3);
  }
}
