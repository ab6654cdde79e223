// PipeDream-2BW (Narayanan et al., ICML '21, §3.1): 1F1B without a flush, two weight versions.
// Its lists run across iterations (Action::lag); the expected orders, periods and bytes below are
// worked out by hand from the paper's rules.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "planner/language/failures.hpp"
#include "planner/language/lower.hpp"
#include "planner/language/schedule_io.hpp"
#include "planner/language/torch_dialect.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/cost_graph.hpp"
#include "planner/timing/memory.hpp"
#include "planner/timing/period.hpp"
#include "test_helpers.hpp"

using namespace recycle;
using namespace recycle::planner;
using namespace recycle::planner::testing;

namespace {

std::string tokens(const WorkerSchedule& w) {
  std::string out;
  for (const Action& a : w.actions) out += (out.empty() ? "" : " ") + to_token(a, w.id.dp);
  return out;
}

bool has(const std::vector<Violation>& violations, Rule rule, const std::string& text) {
  for (const Violation& v : violations) {
    if (v.rule == rule && v.message.find(text) != std::string::npos) return true;
  }
  return false;
}

Nanos period(const Schedule& s, const Costs& costs) {
  const auto st = direct_steady_state(s, CostModel::compute_only(costs));
  REQUIRE(st.has_value());
  REQUIRE(st->settled);
  return st->period;
}

}  // namespace

TEST_CASE("2bw: each stage pairs a forward with the backward pp - 1 - s behind, across batches") {
  const Schedule s = generate("2bw", Layout{1, 3, 4, 1});
  CHECK(s.weight_versions == 2);
  CHECK(s.staggered_optimizer);
  CHECK(optimizer_name(s) == std::string("2bw"));
  // Stage 0 trails by 2: its first two forwards pair with the previous batch's backwards 2 and 3,
  // then that batch's step; stage 1 trails by 1; the last stage steps after its own backward 3.
  CHECK(tokens(s.workers[0]) == "0F0 0B2' 0F1 0B3' 0REDUCE_GRAD' 0OPT' 0F2 0B0 0F3 0B1");
  CHECK(tokens(s.workers[1]) == "1F0 1B3' 1REDUCE_GRAD' 1OPT' 1F1 1B0 1F2 1B1 1F3 1B2");
  CHECK(tokens(s.workers[2]) == "2F0 2B0 2F1 2B1 2F2 2B2 2F3 2B3 2REDUCE_GRAD 2OPT");
  CHECK(validate(s).empty());
  // Activations as 1F1B: stage s holds pp - s micro-batches at its peak (the lagged ones it
  // carries over from the list before included).
  CHECK(peak_inflight_chunks(s) == std::vector<std::int32_t>{3, 2, 1});
  CHECK(validate(s, {.memory_limit = 3}).empty());
  CHECK(has(validate(s, {.memory_limit = 2}), Rule::kMemory, "worker (0,0)"));
  // pipedream-flush is the paper's name for 1f1b.
  CHECK(generate("pipedream-flush", Layout{1, 3, 4, 1}).workers ==
        generate("1f1b", Layout{1, 3, 4, 1}).workers);
}

TEST_CASE("2bw: no bubble in the steady state, each stage busy m (F + B) + OPT per iteration") {
  // F 1, B = I + W = 2, OPT 1: every stage works 8 x 3 + 1 = 25 per iteration and never waits.
  // 1F1B with its flush takes (m + pp - 1)(F + B) + OPT = 11 x 3 + 1 = 34.
  Costs costs = Costs::uniform(4, {1, 1, 1});
  costs.optimizer.assign(4, 1);
  const Layout layout{1, 4, 8, 1};
  CHECK(period(generate("2bw", layout, costs), costs) == 25);
  CHECK(period(generate("1f1b", layout, costs), costs) == 34);
  // Unequal stages: the slowest paces the pipeline. Stage 1 (F 2, B 4) works 4 x 6 = 24 an
  // iteration; stage 0 (F 1, B 2) only 12, and its cycle through stage 1, F0 F1 B1 B0 = 9 per
  // two micro-batches, is shorter.
  Costs unequal = Costs::uniform(2, {1, 1, 1});
  unequal.virtual_stages[1] = {2, 2, 2};
  CHECK(period(generate("2bw", Layout{1, 2, 4, 1}, unequal), unequal) == 24);
  // Data parallel: each stage all-reduces its own batch's gradients (free network) and steps.
  CHECK(period(generate("2bw", Layout{3, 4, 8, 1}, costs), costs) == 25);
}

TEST_CASE("2bw: the first iteration has no iteration before it: its lagged actions take no time") {
  // The first list's lagged backwards and step belong to an iteration before training starts.
  // Without them the last stage waits (pp - 1) F for its first forward and then pairs each of its
  // m forwards with its backward: (pp - 1) F + m (F + B) = 3 + 8 x 3 = 27 at pp 4, 1 + 24 = 25 at
  // pp 2; the steady state (direct network) is unchanged: m (F + B) = 24, no OPT cost here.
  const Costs costs = Costs::uniform(4, {1, 1, 1});
  for (const auto& [pp, first] : {std::pair{4, 27}, std::pair{2, 25}}) {
    CAPTURE(pp);
    const Schedule s = generate("2bw", Layout{1, pp, 8, 1});
    const auto st = direct_steady_state(s, CostModel::compute_only(costs));
    REQUIRE(st.has_value());
    CHECK(st->makespan == first);
    CHECK(st->period == 24);
  }
}

TEST_CASE("2bw: fewer than pp - 1 micro-batches is refused") {
  CHECK_THROWS_WITH_AS((void)generate("2bw", Layout{1, 4, 2, 1}),
                       doctest::Contains("2bw needs at least --pp - 1 (3) micro-batches"),
                       InputError);
  CHECK_THROWS_WITH_AS((void)generate("2bw", Layout{1, 2, 4, 2}),
                       doctest::Contains("--interleave 1"), InputError);
}

TEST_CASE(
    "lags: the validator refuses data of a later iteration, a step before its iteration's "
    "last backward, and a forward that reads a step not yet taken") {
  const Schedule good = generate("2bw", Layout{1, 2, 2, 1});
  // Stage 0: 0F0 0B1' 0REDUCE_GRAD' 0OPT' 0F1 0B0.
  REQUIRE(tokens(good.workers[0]) == "0F0 0B1' 0REDUCE_GRAD' 0OPT' 0F1 0B0");

  // Stage 1: 1F0 1B0 1F1 1B1. With 1F1 marked as the previous iteration's, 1B1 of this iteration
  // would read the activations of an F that runs in the next list.
  Schedule later = good;
  REQUIRE(tokens(later.workers[1]) == "1F0 1B0 1F1 1B1 1REDUCE_GRAD 1OPT");
  later.workers[1].actions[2].lag = 1;
  CHECK(has(validate(later), Rule::kOrder, "reads data of a later iteration"));

  Schedule early = good;  // the step before the backward of its own iteration
  std::swap(early.workers[0].actions[1], early.workers[0].actions[3]);
  CHECK(has(validate(early), Rule::kIteration, "before the worker's last W/B of its iteration"));

  Schedule unmarked = good;  // a step of this iteration while the list still runs the previous's
  unmarked.workers[0].actions[2].lag = 0;
  unmarked.workers[0].actions[3].lag = 0;
  CHECK(has(validate(unmarked), Rule::kIteration, "belongs to the previous one"));

  // One weight version: F0 of this iteration reads the step of the previous one, listed after it.
  Schedule one_version = good;
  one_version.weight_versions = 1;
  CHECK(has(validate(one_version), Rule::kIteration,
            "F reads the weights of the step listed after it"));
  // With the step first, the same lists are a synchronous schedule without a flush.
  Schedule rotated = one_version;
  auto& a = rotated.workers[0].actions;
  a = {a[1], a[2], a[3], a[0], a[4], a[5]};  // 0B1' 0REDUCE_GRAD' 0OPT' 0F0 0F1 0B0
  CHECK(validate(rotated).empty());

  // With the barrier, every OPT steps for one iteration: stage 1's (lag 0) and stage 0's (lag 1)
  // do not.
  Schedule barrier = good;
  barrier.weight_versions = 1;
  barrier.staggered_optimizer = false;
  CHECK(has(validate(barrier), Rule::kIteration, "with the optimizer barrier, one ' mark"));
}

TEST_CASE(
    "2bw: files keep the lags and the mode, and the lowering pairs transfers in one iteration") {
  const Schedule s = generate("2bw", Layout{2, 4, 6, 1});
  const Schedule back = schedule_from_json(to_json(s, nullptr), "s.json");
  CHECK(back == s);
  const Costs costs = Costs::uniform(4, {1, 1, 1});
  const Schedule lowered = lower(s, costs);
  CHECK(lowered.is_lowered());
  CHECK(validate(lowered).empty());
  // The lowered schedule runs at the compute-only period on a free network.
  CHECK(period(lowered, costs) == period(s, costs));
  // torch.distributed.pipelining runs one weight version and flushes every iteration.
  CHECK_THROWS_WITH_AS((void)to_pytorch_csv(lowered, CsvFormat::kComputeComms),
                       doctest::Contains("runs across iterations"), InputError);
}

namespace {

/// The steady-state period of `lowered` on the runtime network (each worker's transfers in list
/// order on one stream, rendezvous), transfers free.
Nanos runtime_period(const Schedule& lowered, const Costs& costs) {
  const auto st = steady_state(lowered, CostModel::compute_only(costs), RunOptions{});
  REQUIRE(st.has_value());
  return st->period;
}

/// `lower()` with the given placement of a lagged reader's pair (planner/language/lower.hpp).
Schedule lowered_with(const Schedule& s, const Costs& costs, LaggedPairs pairs) {
  GraphOptions options;
  options.staggered_optimizer = s.staggered_optimizer;
  const ExecutionGraph graph(
      s, [&costs](WorkerId, const Action& a) { return costs.duration(a); }, options);
  return lower(s, ActionIndex(s), graph, pairs);
}

}  // namespace

TEST_CASE("2bw on the runtime network: a lagged reader's transfers go in its own list") {
  // F = I = W = 1 (B = 2): 2bw never waits in the steady state, m (F + B) an iteration: 24 at
  // pp 4 and m 8, 48 at pp 8 and m 16, on the runtime network as on the direct one. Stage 0's
  // B5' reads the gradient stage 1's B5 makes at the end of its list: received at the end of
  // stage 0's list before, the receive would hold the next list's first SEND_F0 on stage 0's
  // one communication stream until stage 1 sends, late in its list.
  const Costs costs = Costs::uniform(8, {1, 1, 1});
  for (const auto& [pp, m] : {std::pair{4, 8}, std::pair{8, 16}}) {
    CAPTURE(pp);
    const Schedule s = generate("2bw", Layout{1, pp, m, 1});
    const Schedule lowered = lower(s, costs);
    CHECK(validate(lowered).empty());
    CHECK(runtime_period(lowered, costs) == 3 * m);
    CHECK(period(lowered, costs) == 3 * m);
    const std::string first = tokens(lowered.workers[0]);
    const std::string pair =
        "0RECV_B" + std::to_string(pp + 1) + "' 0B" + std::to_string(pp + 1) + "'";
    CHECK_MESSAGE(first.find(pair) != std::string::npos, first);
    CHECK(tokens(lowered.workers[1]).find("1SEND_B" + std::to_string(pp + 1) + "'") !=
          std::string::npos);
    // The other placement is the slower one here; lower() keeps the faster.
    const Schedule previous = lowered_with(s, costs, LaggedPairs::kPreviousList);
    CHECK(validate(previous).empty());
    CHECK(runtime_period(previous, costs) > 3 * m);
  }
}

TEST_CASE(
    "2bw lowering: of the two placements of lagged pairs, the faster on the runtime network") {
  // ReCycle on a 2bw base re-routes micro-batches, and there the previous-list placement can be
  // the faster: whichever lower() keeps runs no slower than either.
  const Costs costs = Costs::uniform(4, {1, 1, 1});
  for (const auto& [layout, failed] :
       {std::pair{Layout{4, 4, 8, 1}, "0:2"}, std::pair{Layout{2, 2, 4, 1}, "1:1"},
        std::pair{Layout{2, 4, 8, 1}, "1:0,0:3"}}) {
    CAPTURE(failed);
    RecycleOptions options;
    options.layout = layout;
    options.base = "2bw";
    options.failed = parse_failures(failed, layout);
    options.model = CostModel::compute_only(Costs::uniform(layout.virtual_stages(), {1, 1, 1}));
    const Schedule plan = plan_recycle(options).schedule;
    const Costs c = Costs::uniform(layout.virtual_stages(), {1, 1, 1});
    const Nanos chosen = runtime_period(lower(plan, c), c);
    const Nanos previous = runtime_period(lowered_with(plan, c, LaggedPairs::kPreviousList), c);
    const Schedule late = lowered_with(plan, c, LaggedPairs::kReadersList);
    CHECK(validate(late).empty());
    const Nanos readers = runtime_period(late, c);
    CHECK(chosen == std::min(previous, readers));
    // With eager sends, chosen by eager sends.
    const CostModel model = CostModel::compute_only(c);
    RunOptions eager;
    eager.eager_sends = true;
    const auto on_eager = [&](const Schedule& lowered) {
      const auto st = steady_state(lowered, model, eager);
      REQUIRE(st.has_value());
      return st->period;
    };
    CHECK(on_eager(lower(plan, model, true)) ==
          std::min(on_eager(lowered_with(plan, c, LaggedPairs::kPreviousList)), on_eager(late)));
  }
  (void)costs;
}

TEST_CASE(
    "lags: a SEND at most one list behind its compute, and read by a reader of its own list") {
  const Costs costs = Costs::uniform(4, {1, 1, 1});
  const Schedule lowered = lower(generate("2bw", Layout{1, 4, 8, 1}), costs);
  REQUIRE(validate(lowered).empty());
  // Stage 1's SEND_B5' sends what the list before made; two lists behind, nothing can.
  Schedule twice = lowered;
  for (Action& a : twice.workers[1].actions) {
    if (a.type == ActionType::kSendB && a.lag == 1) a.lag = 2;
  }
  CHECK(has(validate(twice), Rule::kOrder, "one more in the list after its compute's"));
  // A pair one list behind its data for a reader of this list: the reader would read data of
  // a later iteration.
  Schedule sync = lower(generate("1f1b", Layout{1, 2, 4, 1}), costs);
  for (WorkerSchedule& w : sync.workers) {
    for (Action& a : w.actions) {
      if ((a.type == ActionType::kSendF || a.type == ActionType::kRecvF) && a.microbatch == 0)
        a.lag = 1;
    }
  }
  CHECK(has(validate(sync), Rule::kOrder, "reads data of a later iteration"));
}

TEST_CASE("2bw: memory holds two weight versions, gradients and optimizer state once") {
  // Stage params 1 GB: state 2 x 1 + 1 (optimizer) = 3 GB, plus 1 GB for the second version.
  CostModel m = CostModel::compute_only(Costs::uniform(2, {1, 1, 1}));
  constexpr Bytes kGB = 1'000'000'000;
  m.param_bytes = {kGB, kGB};
  m.state_bytes = {3 * kGB, 3 * kGB};
  m.activation_bytes = {kGB, kGB};
  m.worker_memory = 5 * kGB + kGB / 2;
  CHECK(m.kept_bytes(0) == 3 * kGB);
  CHECK(m.kept_bytes(0, 2) == 4 * kGB);
  // 1F1B on 2 stages: stage 0 peaks at 2 micro-batches, 3 + 2 = 5 GB of 5.5: fits.
  const Layout layout{1, 2, 4, 1};
  const Schedule flush = generate("1f1b", layout);
  CHECK_NOTHROW(check_memory(flush, m, "job.json"));
  // 2bw: the same activations and a second version of the weights, 4 + 2 = 6 GB: 0.5 GB short.
  const Schedule two_bw = generate("2bw", layout);
  CHECK(peak_memory(two_bw, m) == std::vector<Bytes>{6 * kGB, 5 * kGB});
  CHECK_THROWS_WITH_AS(check_memory(two_bw, m, "job.json"), doctest::Contains("0.5 GB short"),
                       InputError);
  CHECK(memory_limits(m, layout, "job.json", 2) == std::vector<std::int32_t>{1, 1});
}
