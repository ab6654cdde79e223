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
#include "planner/validator.hpp"

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
  for (const std::int32_t pp : kPps) {
    for (const std::int32_t m : microbatch_grid(pp)) {
      for (const std::int32_t dp : kDps) {
        for (const std::string name : {"gpipe", "1f1b"}) {
          CAPTURE(name);
          CAPTURE(pp);
          CAPTURE(m);
          CAPTURE(dp);
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
      }
    }
  }
}

TEST_CASE("interleaved: valid, M*V forwards and backwards, Megatron's warm-up") {
  for (const std::int32_t pp : kPps) {
    for (const std::int32_t m : microbatch_grid(pp)) {
      if (m % pp != 0) continue;
      for (const std::int32_t v : {2, 3}) {
        for (const std::int32_t dp : kDps) {
          CAPTURE(pp);
          CAPTURE(m);
          CAPTURE(v);
          CAPTURE(dp);
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
      }
    }
  }
}

TEST_CASE("zb-h1: valid, M F/I/W, 1F1B's warm-up, peak pp micro-batches, never above 1F1B") {
  for (const std::int32_t pp : kPps) {
    for (const std::int32_t m : microbatch_grid(pp)) {
      for (const std::int32_t dp : kDps) {
        CAPTURE(pp);
        CAPTURE(m);
        CAPTURE(dp);
        const Schedule schedule = generate("zb-h1", Layout{dp, pp, m, 1});
        check_valid(schedule);
        for (const WorkerSchedule& worker : schedule.workers) {
          check_split_backward_counts(worker, m);
          CHECK(leading_forwards(worker) == std::min(pp - worker.id.stage, m));
        }
        const std::int32_t one_f_one_b = max_peak(generate("1f1b", Layout{dp, pp, m, 1}));
        CHECK(max_peak(schedule) <= one_f_one_b);
        if (m >= pp) CHECK(max_peak(schedule) == pp);
      }
    }
  }
}

TEST_CASE("zb-h2: valid, M F/I/W, peak at most the memory limit, 2pp - 1 by default") {
  for (const std::int32_t pp : kPps) {
    for (const std::int32_t m : microbatch_grid(pp)) {
      for (const std::int32_t dp : kDps) {
        for (const std::optional<std::int32_t> limit :
             {std::optional<std::int32_t>{}, std::optional<std::int32_t>{1},
              std::optional<std::int32_t>{2}, std::optional<std::int32_t>{pp}}) {
          CAPTURE(pp);
          CAPTURE(m);
          CAPTURE(dp);
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
      }
    }
  }
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
  for (const std::string& name : fault_free_generator_names()) {
    CAPTURE(name);
    CHECK(where(name, Layout{1, 0, 8, 1}) == "--pp");
    CHECK(where(name, Layout{0, 4, 8, 1}) == "--dp");
    CHECK(where(name, Layout{1, 4, 0, 1}) == "--microbatches");
  }
  GeneratorOptions options;
  options.layout = Layout{1, 4, 8, 1};
  options.memory_limit = 0;
  CHECK_THROWS_AS((void)generate_fault_free("zb-h2", options), InputError);
}
