// Memory in bytes (planner/timing/memory.hpp): what fits each stage's workers, the peak a schedule
// reaches, and the planners keeping to it. Expected values are worked out by hand from the
// profiles below.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/memory.hpp"
#include "profiles/profile.hpp"
#include "test_helpers.hpp"

using namespace recycle;
using namespace recycle::planner;
using namespace recycle::planner::testing;

namespace {

constexpr Bytes kGB = 1'000'000'000;

/// `pp` stages of 10/11/8 ms with `activation` bytes per micro-batch and `params` bytes of
/// weights (state: 2 x params of weights and gradients, plus `optimizer` bytes), on GPUs of
/// `memory` bytes, `tp` per worker.
profiles::Profile profile(std::vector<Bytes> params, Bytes optimizer, Bytes activation,
                          Bytes memory, std::int32_t tp = 1) {
  profiles::Profile p;
  p.tensor_parallel = tp;
  for (const Bytes w : params) {
    profiles::StageProfile s;
    s.forward = 10'000'000;
    s.backward_input = 11'000'000;
    s.backward_weight = 8'000'000;
    s.activation_bytes = activation;
    s.output_bytes = 50'000'000;
    s.param_bytes = w;
    s.optimizer_state_bytes = optimizer;
    p.stages.push_back(s);
  }
  p.hardware.intra_node_bandwidth = 200'000'000'000;
  p.hardware.inter_node_bandwidth = 25'000'000'000;
  p.hardware.memory_bytes = memory;
  return p;
}

CostModel model_of(const profiles::Profile& p, const Layout& layout) {
  return CostModel::from_profile(p, layout, "p.json");
}

}  // namespace

TEST_CASE("memory_limits: what fits next to each stage's state, in micro-batches") {
  // Stage 0: 2 x 1 GB + 0 = 2 GB of state, (7 - 2) / 1 = 5 micro-batches; stage 1: 2 x 2.5 GB =
  // 5 GB, (7 - 5) / 1 = 2.
  const Layout layout{1, 2, 4, 1};
  const CostModel m = model_of(profile({kGB, 5 * kGB / 2}, 0, kGB, 7 * kGB), layout);
  CHECK(m.kept_bytes(0) == 2 * kGB);
  CHECK(m.kept_bytes(1) == 5 * kGB);
  CHECK(memory_limits(m, layout, "p.json") == std::vector<std::int32_t>{5, 2});

  // Tensor parallel 2: a worker has two GPUs of 3.5 GB, the same 7 GB.
  const CostModel tp2 = model_of(profile({kGB, 5 * kGB / 2}, 0, kGB, 7 * kGB / 2, 2), layout);
  CHECK(tp2.worker_memory == 7 * kGB);
  CHECK(memory_limits(tp2, layout, "p.json") == std::vector<std::int32_t>{5, 2});

  // Interleave 2: a micro-batch holds both chunks' halves, 1 GB in all, so the same limits.
  const Layout interleaved{1, 2, 4, 2};
  CHECK(memory_limits(model_of(profile({kGB, 5 * kGB / 2}, 0, kGB, 7 * kGB), interleaved),
                      interleaved, "p.json") == std::vector<std::int32_t>{5, 2});

  // No memory in the model (--costs): nothing to limit.
  CHECK_FALSE(memory_limits(CostModel::compute_only({}), layout, "--costs").has_value());
}

TEST_CASE(
    "memory_limits: a stage that cannot hold one micro-batch is an error saying by how much") {
  // Stage 1: 2 x 3 GB + 0.5 GB = 6.5 GB of state and 1 GB of activations need 7.5 GB of 7.
  const Layout layout{1, 2, 4, 1};
  const CostModel m = model_of(profile({kGB, 3 * kGB}, kGB / 2, kGB, 7 * kGB), layout);
  CHECK_THROWS_WITH_AS(
      (void)memory_limits(m, layout, "p.json"),
      "p.json: stage 1 does not fit a worker: 6.5 GB of parameters, gradients and optimizer state "
      "and 1 GB of activations for one micro-batch need 7.5 GB, a worker has 7 GB: 0.5 GB short",
      InputError);
}

TEST_CASE("planning_limits: bytes capped by the limit given, without bytes the limit or default") {
  const Layout layout{1, 2, 4, 1};
  const CostModel m = model_of(profile({kGB, 5 * kGB / 2}, 0, kGB, 7 * kGB), layout);
  CHECK(planning_limits(m, layout, std::nullopt, 2) == std::vector<std::int32_t>{5, 2});
  CHECK(planning_limits(m, layout, 3, 2) == std::vector<std::int32_t>{3, 2});
  CHECK(planning_limits(m, layout, 9, 2) == std::vector<std::int32_t>{5, 2});
  const CostModel bare = CostModel::compute_only({});
  CHECK(planning_limits(bare, layout, 3, 2) == std::vector<std::int32_t>{3, 3});
  CHECK(planning_limits(bare, layout, std::nullopt, 2) == std::vector<std::int32_t>{2, 2});
}

TEST_CASE("peak_memory and check_memory: 1F1B holds pp - s micro-batches on stage s") {
  // 4 GB of state (2 x 1.5 + 1) and 1 GB per micro-batch on 7 GB GPUs: stage 0 of 1F1B pp 4 holds
  // 4 micro-batches, 8 GB in all, 1 GB short; stage 3 holds 1, 5 GB.
  const Layout layout{1, 4, 8, 1};
  const CostModel m =
      model_of(profile(std::vector<Bytes>(4, 3 * kGB / 2), kGB, kGB, 7 * kGB), layout);
  const Schedule one_f_one_b = generate("1f1b", layout);
  CHECK(peak_memory(one_f_one_b, m) == std::vector<Bytes>{8 * kGB, 7 * kGB, 6 * kGB, 5 * kGB});
  CHECK_THROWS_WITH_AS(check_memory(one_f_one_b, m, "--profile"),
                       "--profile: 1f1b does not fit worker (0,0): 4 GB of state and 4 GB of "
                       "activations at its peak need 8 GB, a worker has 7 GB: 1 GB short",
                       InputError);
  // GPipe holds all 8 on every stage: 12 GB.
  CHECK(peak_memory(generate("gpipe", layout), m)[3] == 12 * kGB);
  // Without memory in the model nothing is checked.
  CHECK_NOTHROW(check_memory(one_f_one_b, CostModel::compute_only({}), "--costs"));
}

TEST_CASE("plan_recycle keeps every worker, hosts included, within its bytes") {
  // Stage limits {5, 2, 3, 3}: 2 x params + 1 GB of optimizer state next to 1 GB per micro-batch.
  const Layout layout{4, 4, 8, 1};
  const CostModel m =
      model_of(profile({kGB / 2, 2 * kGB, 3 * kGB / 2, 3 * kGB / 2}, kGB, kGB, 7 * kGB), layout);
  REQUIRE(memory_limits(m, layout, "p.json") == std::vector<std::int32_t>{5, 2, 3, 3});
  for (const char* failed : {"", "1:1", "0:0,2:3", "0:1,1:1,2:1"}) {
    CAPTURE(failed);
    RecycleOptions options;
    options.layout = layout;
    options.failed = parse_failures(failed, layout);
    options.model = m;
    const RecyclePlan plan = plan_recycle(options);
    REQUIRE(plan.feasible);
    const std::vector<Bytes> peaks = peak_memory(plan.schedule, m);
    for (std::size_t w = 0; w < peaks.size(); ++w) {
      CAPTURE(to_string(plan.schedule.workers[w].id));
      CHECK(peaks[w] <= m.worker_memory);
    }
    CHECK_NOTHROW(check_memory(plan.schedule, m, "p.json"));
  }
}

TEST_CASE("a sharded optimizer state is re-split over a stage's live ranks, a replicated one not") {
  // DP 4: each rank holds a 1 GB shard of its stage's 4 GB of optimizer state, next to 2 x 1 GB
  // of weights and gradients and 1 GB per micro-batch, on 7 GB GPUs: (7 - 3) / 1 = 4 fit.
  const Layout layout{4, 2, 4, 1};
  profiles::Profile p = profile({kGB, kGB}, kGB, kGB, 7 * kGB);
  p.optimizer_shards = 4;
  const CostModel m = model_of(p, layout);
  CHECK(m.kept_bytes(1) == 3 * kGB);
  // One rank of stage 1 lost: the three live ones hold ceil(4 GB / 3) each; two lost: 2 GB.
  CHECK(m.kept_bytes(1, 1, 3) == 2 * kGB + (4 * kGB + 2) / 3);
  CHECK(m.kept_bytes(1, 1, 2) == 4 * kGB);
  CHECK(memory_limits(m, layout, "p.json") == std::vector<std::int32_t>{4, 4});
  // (7 - 4) / 1 = 3 on stage 1 with two of its ranks down; stage 0 keeps 4.
  const std::vector<WorkerId> two = parse_failures("0:1,2:1", layout);
  CHECK(memory_limits(m, layout, "p.json", 1, two) == std::vector<std::int32_t>{4, 3});
  CHECK(planning_limits(m, layout, std::nullopt, 2, two) == std::vector<std::int32_t>{4, 3});
  // One pipeline simulated for four (the replay's fault-free configuration): its ring holds the
  // three absent ranks, which hold their shards; for two, each of the two holds 2 GB.
  const Layout alone{1, 2, 4, 1};
  CostModel stands_for = model_of(p, alone);
  stands_for.cluster.set_absent_ring_peers(3);
  CHECK(memory_limits(stands_for, alone, "p.json") == std::vector<std::int32_t>{4, 4});
  stands_for.cluster.set_absent_ring_peers(1);
  CHECK(memory_limits(stands_for, alone, "p.json") == std::vector<std::int32_t>{3, 3});
  // With a replica of each shard (2 GB a rank), the state stays where it is.
  p.optimizer_shard_copies = 2;
  p.stages[1].optimizer_state_bytes = 2 * kGB;
  const CostModel replicas = model_of(p, layout);
  CHECK(replicas.kept_bytes(1, 1, 2) == 4 * kGB);
  CHECK(replicas.kept_bytes(1, 1, 3) == 4 * kGB);
}

TEST_CASE("check_memory counts the re-split shards of a failed stage") {
  // DP 2, 1F1B pp 2: stage 0 holds 2 micro-batches. 2 x 1 GB + a 2 GB shard + 2 GB = 6 GB of
  // 7 fault-free; with rank 0 of stage 0 down, rank 1 holds the whole 4 GB state: 2 + 4 + 2 =
  // 8 GB, 1 GB short.
  const Layout layout{2, 2, 4, 1};
  profiles::Profile p = profile({kGB, kGB}, 2 * kGB, kGB, 7 * kGB);
  p.optimizer_shards = 2;
  const CostModel m = model_of(p, layout);
  CHECK(peak_memory(generate("1f1b", layout), m)[0] == 6 * kGB);
  RecycleOptions options;
  options.layout = layout;
  options.failed = parse_failures("0:0", layout);
  options.model = m;
  options.memory_limit = 2;
  // The planner keeps to what fits: 1 micro-batch on stage 0 (7 - 6 GB), on stage 1 the 2 given
  // (3 fit next to its 4 GB).
  CHECK(recycle_memory_limits(options) == std::vector<std::int32_t>{1, 2});
  // Pipeline 1 as 1F1B runs it, rank 0 of stage 0 down.
  Schedule s = generate("1f1b", layout);
  s.failed = options.failed;
  REQUIRE(s.workers.front().id == WorkerId{0, 0});
  s.workers.erase(s.workers.begin());
  CHECK_THROWS_WITH_AS(check_memory(s, m, "--profile"),
                       "--profile: 1f1b does not fit worker (1,0): 6 GB of state and 2 GB of "
                       "activations at its peak need 8 GB, a worker has 7 GB: 1 GB short",
                       InputError);
}
