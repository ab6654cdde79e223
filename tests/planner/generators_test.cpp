// Fault-free generators: every schedule they write is valid, has the right counts per worker, the
// warm-up lengths of the papers, and the memory peaks the generators promise.
#include <doctest/doctest.h>

#include "tests/planner/test_helpers.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "planner/generators.hpp"
#include "planner/language/timing.hpp"
#include "planner/language/validator.hpp"

namespace {

using namespace recycle::planner;
using namespace recycle::planner::testing;
using recycle::InputError;

std::int32_t count(const WorkerSchedule& worker, ActionType type) {
  return static_cast<std::int32_t>(
      std::count_if(worker.actions.begin(), worker.actions.end(),
                    [type](const Action& a) { return a.type == type; }));
}

/// Forwards before the worker's first non-forward action.
std::int32_t leading_forwards(const WorkerSchedule& worker) {
  const auto it = std::find_if(worker.actions.begin(), worker.actions.end(),
                               [](const Action& a) { return a.type != ActionType::kForward; });
  return static_cast<std::int32_t>(it - worker.actions.begin());
}

std::int32_t max_peak(const Schedule& schedule) {
  const std::vector<std::int32_t> peaks = peak_inflight_chunks(schedule);
  return *std::max_element(peaks.begin(), peaks.end());
}

std::vector<std::int32_t> microbatch_grid(std::int32_t pp) {
  return {1, pp, 2 * pp, 3 * pp + 1};
}

constexpr std::int32_t kPps[] = {1, 2, 3, 4, 8};
constexpr std::int32_t kDps[] = {1, 3};

/// Calls `check(pp, m, dp)` for every pp of kPps, every micro-batch count of `ms(pp)` and every
/// dp of kDps, with the three captured for failure messages: the grid every generator test walks.
template <typename Ms, typename Check>
void for_each_grid(Ms&& ms, Check&& check) {
  for (const std::int32_t pp : kPps) {
    for (const std::int32_t m : ms(pp)) {
      for (const std::int32_t dp : kDps) {
        CAPTURE(pp);
        CAPTURE(m);
        CAPTURE(dp);
        check(pp, m, dp);
      }
    }
  }
}

/// The checks every generator's output passes: valid, owners are the worker's pipeline.
void check_valid(const Schedule& schedule) {
  const std::vector<Violation> violations = validate(schedule);
  INFO(show(violations));
  CHECK(violations.empty());
  CHECK(schedule.workers.size() == static_cast<std::size_t>(schedule.layout.workers()));
  for (const WorkerSchedule& worker : schedule.workers) {
    for (const Action& a : worker.actions) CHECK(a.owner == worker.id.dp);
  }
}

}  // namespace

namespace {

/// A worker of a split-backward schedule runs m F, m I and m W, and no fused B.
void check_split_backward_counts(const WorkerSchedule& worker, std::int32_t m) {
  CHECK(count(worker, ActionType::kForward) == m);
  CHECK(count(worker, ActionType::kBackwardInput) == m);
  CHECK(count(worker, ActionType::kBackwardWeight) == m);
  CHECK(count(worker, ActionType::kBackward) == 0);
}

}  // namespace

TEST_CASE("gpipe and 1f1b: valid, M forwards and M backwards, warm-up of min(pp - s, M) forwards") {
  for_each_grid(microbatch_grid, [](std::int32_t pp, std::int32_t m, std::int32_t dp) {
    for (const std::string name : {"gpipe", "1f1b"}) {
      CAPTURE(name);
      const Schedule schedule = generate(name, Layout{dp, pp, m, 1});
      check_valid(schedule);
      for (const WorkerSchedule& worker : schedule.workers) {
        const std::int32_t s = worker.id.stage;
        CHECK(count(worker, ActionType::kForward) == m);
        CHECK(count(worker, ActionType::kBackward) == m);
        CHECK(worker.actions.size() == static_cast<std::size_t>(2 * m));
        // 1F1B: pp - s - 1 warm-up forwards, then the steady phase opens with one more F.
        const std::int32_t leading = name == "gpipe" ? m : std::min(pp - s, m);
        CHECK(leading_forwards(worker) == leading);
      }
      // 1F1B holds at most its leading forwards; GPipe holds all M.
      const std::vector<std::int32_t> peaks = peak_inflight_chunks(schedule);
      for (std::size_t w = 0; w < peaks.size(); ++w) {
        const std::int32_t s = schedule.workers[w].id.stage;
        CHECK(peaks[w] == (name == "gpipe" ? m : std::min(pp - s, m)));
      }
    }
  });
}

TEST_CASE("interleaved: valid, M*V forwards and backwards, Megatron's warm-up") {
  for_each_grid(microbatch_grid, [](std::int32_t pp, std::int32_t m, std::int32_t dp) {
    if (m % pp != 0) return;
    for (const std::int32_t v : {2, 3}) {
      CAPTURE(v);
      const Schedule schedule = generate("interleaved", Layout{dp, pp, m, v});
      check_valid(schedule);
      const std::int32_t total = m * v;
      for (const WorkerSchedule& worker : schedule.workers) {
        const std::int32_t s = worker.id.stage;
        CHECK(count(worker, ActionType::kForward) == total);
        CHECK(count(worker, ActionType::kBackward) == total);
        CHECK(count(worker, ActionType::kBackwardInput) == 0);
        // Megatron: (pp - s - 1) * 2 + (V - 1) * pp warm-up steps, everything when M == pp;
        // the steady phase opens with one more forward.
        const std::int32_t warmup =
            m == pp ? total : std::min((pp - s - 1) * 2 + (v - 1) * pp, total);
        CHECK(leading_forwards(worker) == (warmup < total ? warmup + 1 : total));
      }
    }
  });
}

TEST_CASE("runnable micro-batches: interleaved takes whole groups of pp, the others any count") {
  const Layout pp4{1, 4, 1, 2};
  CHECK(runnable_microbatches("interleaved", pp4, 69) == 72);
  CHECK(runnable_microbatches("interleaved", pp4, 8) == 8);
  CHECK(runnable_microbatches("interleaved", pp4, 1) == 4);
  CHECK(runnable_microbatches("1f1b", pp4, 69) == 69);
  CHECK(runnable_microbatches("zb-v", pp4, 7) == 7);
  // What it says the generator takes, the generator takes; one less it refuses.
  CHECK(generate("interleaved", Layout{1, 4, 72, 2}).workers.size() == 4);
  CHECK_THROWS_AS((void)generate("interleaved", Layout{1, 4, 71, 2}), InputError);
}

TEST_CASE("zb-h1: valid, M F/I/W, 1F1B's warm-up, peak pp micro-batches, never above 1F1B") {
  for_each_grid(microbatch_grid, [](std::int32_t pp, std::int32_t m, std::int32_t dp) {
    const Schedule schedule = generate("zb-h1", Layout{dp, pp, m, 1});
    check_valid(schedule);
    for (const WorkerSchedule& worker : schedule.workers) {
      check_split_backward_counts(worker, m);
      CHECK(leading_forwards(worker) == std::min(pp - worker.id.stage, m));
    }
    const std::int32_t one_f_one_b = max_peak(generate("1f1b", Layout{dp, pp, m, 1}));
    CHECK(max_peak(schedule) <= one_f_one_b);
    if (m >= pp) CHECK(max_peak(schedule) == pp);
  });
}

TEST_CASE("zb-h2: valid, M F/I/W, peak at most the memory limit, 2pp - 1 by default") {
  for_each_grid(microbatch_grid, [](std::int32_t pp, std::int32_t m, std::int32_t dp) {
    for (const std::optional<std::int32_t> limit :
         {std::optional<std::int32_t>{}, std::optional<std::int32_t>{1},
          std::optional<std::int32_t>{2}, std::optional<std::int32_t>{pp}}) {
      CAPTURE(limit.value_or(-1));
      const Schedule schedule = generate("zb-h2", Layout{dp, pp, m, 1}, limit);
      check_valid(schedule);
      for (const WorkerSchedule& worker : schedule.workers) {
        check_split_backward_counts(worker, m);
      }
      CHECK(max_peak(schedule) <= limit.value_or(2 * pp - 1));
      if (limit) {
        CHECK(max_peak(schedule) <= *limit);
        ValidationOptions options;
        options.memory_limit = limit;
        const std::vector<Violation> violations = validate(schedule, options);
        INFO(show(violations));
        CHECK(violations.empty());
      }
    }
  });
}

namespace {

/// The V layout zb-v and dualpipe-v run on: two chunks per worker, chunk 1 reversed.
Layout v_layout(std::int32_t dp, std::int32_t pp, std::int32_t m) {
  return layout_for("zb-v", Layout{dp, pp, m, 1});
}

std::int32_t count_at(const WorkerSchedule& worker, ActionType type, std::int32_t virtual_stage) {
  return static_cast<std::int32_t>(std::count_if(
      worker.actions.begin(), worker.actions.end(),
      [&](const Action& a) { return a.type == type && a.virtual_stage == virtual_stage; }));
}

recycle::Nanos unit_makespan(const Schedule& schedule) {
  const auto timeline =
      compute_timeline(schedule, Costs::uniform(schedule.layout.virtual_stages(), {1, 1, 1}));
  REQUIRE(timeline.has_value());
  return timeline->makespan;
}

}  // namespace

TEST_CASE("V placement: stage s runs virtual stages s and 2pp - 1 - s") {
  const Layout layout = v_layout(1, 4, 8);
  CHECK(layout.interleave == 2);
  CHECK(layout.placement == Placement::kV);
  const std::int32_t want[] = {0, 1, 2, 3, 3, 2, 1, 0};  // torch's "v" stage-to-rank mapping
  for (std::int32_t v = 0; v < 8; ++v) {
    CAPTURE(v);
    CHECK(layout.stage_of(v) == want[v]);
    CHECK(layout.virtual_stage(layout.stage_of(v), layout.chunk_of(v)) == v);
  }
  CHECK(layout_for("1f1b", Layout{1, 4, 8, 1}) == Layout{1, 4, 8, 1});
}

/// Generates `name` on a V for every pp, the micro-batch counts `ms(pp)` and every dp; checks it is
/// valid, calls `per_chunk(worker, virtual stage, m)` for both chunks of every worker, then
/// `whole(schedule, pp, m)`.
template <typename Ms, typename PerChunk, typename Whole>
void check_v_grid(const std::string& name, Ms&& ms, PerChunk&& per_chunk, Whole&& whole) {
  for_each_grid(ms, [&](std::int32_t pp, std::int32_t m, std::int32_t dp) {
    const Schedule schedule = generate(name, v_layout(dp, pp, m));
    check_valid(schedule);
    for (const WorkerSchedule& worker : schedule.workers) {
      for (const std::int32_t chunk : {0, 1})
        per_chunk(worker, schedule.layout.virtual_stage(worker.id.stage, chunk), m);
    }
    whole(schedule, pp, m);
  });
}

TEST_CASE("zb-v: valid, M F/I/W per chunk, 1F1B's peak of 2pp half-stage chunks") {
  check_v_grid(
      "zb-v", microbatch_grid,
      [](const WorkerSchedule& worker, std::int32_t v, std::int32_t m) {
        CHECK(count_at(worker, ActionType::kForward, v) == m);
        CHECK(count_at(worker, ActionType::kBackwardInput, v) == m);
        CHECK(count_at(worker, ActionType::kBackwardWeight, v) == m);
      },
      [](const Schedule& schedule, std::int32_t pp, std::int32_t m) {
        // A chunk is half a stage, so 2pp chunks are 1F1B's pp micro-batches. Stage 0 reaches
        // it once M >= 2pp - 1: 2pp - 1 chunk-0 forwards, then chunk 1's first forward.
        CHECK(max_peak(schedule) <= 2 * pp);
        if (m >= 2 * pp - 1) CHECK(max_peak(schedule) == 2 * pp);
      });
}

TEST_CASE("dualpipe-v: valid, every chunk's M backwards, a peak of 2pp + 1 half-stage chunks") {
  check_v_grid(
      "dualpipe-v",
      [](std::int32_t pp) {
        return std::vector<std::int32_t>{2 * pp, 2 * pp + 1, 3 * pp + 1};
      },
      [](const WorkerSchedule& worker, std::int32_t v, std::int32_t m) {
        CHECK(count_at(worker, ActionType::kForward, v) == m);
        CHECK(count_at(worker, ActionType::kBackward, v) +
                  count_at(worker, ActionType::kBackwardInput, v) ==
              m);
        CHECK(count_at(worker, ActionType::kBackwardWeight, v) ==
              count_at(worker, ActionType::kBackwardInput, v));
      },
      [](const Schedule& schedule, std::int32_t pp, std::int32_t) {
        // Stage 0 by hand: 2(pp - 1) + 1 chunk-0 forwards and one chunk-1 forward hold 2pp
        // chunks; in the main step each (F0, B1) pair peaks one above that.
        if (pp > 1) CHECK(max_peak(schedule) == 2 * pp + 1);
      });
}

TEST_CASE("zb-v and dualpipe-v, pp 4, M 8, F = I = W = 1: the bubble is pp - 1 per stage") {
  // By hand: the first forward reaches stage pp - 1 after pp - 1 steps, and every stage has 2
  // chunks x M x (F + I + W) = 6M steps of work, so no schedule ends before 6M + pp - 1 = 51; both
  // reach it (ZB-V's zero-bubble steady state, DualPipe-V's F/B pairs), so the bubble is
  // pp x 51 - pp x 48 = 12 steps in all, pp - 1 on every stage. For scale: 1F1B on the same
  // work (a stage costing 2 chunks, F = I + W = 2... ) idles (pp - 1)(F + I + W) = 18 steps a
  // stage.
  for (const std::string name : {"zb-v", "dualpipe-v"}) {
    CAPTURE(name);
    const Schedule schedule = generate(name, v_layout(1, 4, 8));
    CHECK(unit_makespan(schedule) == 6 * 8 + 4 - 1);
  }
  const Schedule one_f_one_b = generate("1f1b", Layout{1, 4, 8, 1});
  const auto timeline = compute_timeline(one_f_one_b, Costs::uniform(4, {2, 2, 2}));
  REQUIRE(timeline.has_value());
  CHECK(timeline->makespan == (8 + 4 - 1) * 6);
}

TEST_CASE("generators reject layouts they cannot serve, naming the flag") {
  const auto where = [](const std::string& name, Layout layout) -> std::string {
    try {
      (void)generate(name, layout);
    } catch (const InputError& e) {
      return e.where();
    }
    return "no error";
  };
  CHECK(where("2f2b", Layout{1, 4, 8, 1}) == "--schedule");
  for (const std::string name : {"gpipe", "1f1b", "zb-h1", "zb-h2"}) {
    CAPTURE(name);
    CHECK(where(name, Layout{1, 4, 8, 2}) == "--interleave");
  }
  CHECK(where("interleaved", Layout{1, 4, 6, 2}) == "--microbatches");
  CHECK(where("interleaved", Layout{1, 4, 8, 1}) == "--interleave");
  CHECK(where("zb-v", Layout{1, 4, 8, 3}) == "--interleave");
  CHECK(where("zb-v", Layout{1, 4, 8, 2}) == "--interleave");  // looped, not a V
  CHECK(where("dualpipe-v", v_layout(1, 4, 7)) == "--microbatches");
  CHECK(where("1f1b", v_layout(1, 4, 8)) == "--schedule");
  for (const std::string& name : fault_free_generator_names()) {
    CAPTURE(name);
    CHECK(where(name, layout_for(name, Layout{1, 0, 8, 1})) == "--pp");
    CHECK(where(name, layout_for(name, Layout{0, 4, 8, 1})) == "--dp");
    CHECK(where(name, layout_for(name, Layout{1, 4, 0, 1})) == "--microbatches");
  }
  GeneratorOptions options;
  options.layout = Layout{1, 4, 8, 1};
  options.memory_limit = 0;
  CHECK_THROWS_AS((void)generate_fault_free("zb-h2", options), InputError);
}
