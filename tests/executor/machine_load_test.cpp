// Other processes' share of the machine during a run (executor/machine_load.hpp), and a run's
// iteration times (RunResult::iteration_times_s).
#include <doctest/doctest.h>

#include <chrono>
#include <vector>

#include "executor/machine_load.hpp"
#include "executor/runtime.hpp"

using recycle::executor::LoadSample;
using recycle::executor::others_busy_cores;

TEST_CASE("others_busy_cores: the machine's busy ticks less the process's own, per wall second") {
  // 2 s apart at 100 ticks a second: the machine was busy 300 ticks, this process 120 of them, so
  // others 180 ticks = 1.8 s of processor time in 2 s: 0.9 cores.
  const LoadSample before{1'000, 500, 0};
  const LoadSample after{1'300, 620, 2'000'000'000};
  CHECK(others_busy_cores(before, after, 100) == doctest::Approx(0.9));
  // The process alone: nothing for the others, never below zero (its ticks and the machine's are
  // read at slightly different moments).
  CHECK(others_busy_cores(before, LoadSample{1'100, 610, 2'000'000'000}, 100) == 0);
  CHECK(others_busy_cores(before, before, 100) == 0);  // no time passed
}

TEST_CASE("sample_load reads this machine, and a busy thread of its own is not the others'") {
  const auto before = recycle::executor::sample_load();
  if (!before) {
    MESSAGE("RECYCLE-SKIPPED: /proc cannot be read here");
    return;
  }
  // Spin 0.2 s on this thread: the process's own ticks grow by about 20 at 100 a second.
  volatile double x = 0;
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(200)) x = x + 1;
  const auto after = recycle::executor::sample_load();
  REQUIRE(after.has_value());
  CHECK(after->own_ticks > before->own_ticks);
  CHECK(after->wall_ns > before->wall_ns);
}

TEST_CASE("iteration_times_s: the spacings of a schedule's iteration ends after its first") {
  recycle::executor::RunResult r;
  r.iteration_end_ns = {100, 250, 420, 600, 1000, 1300};
  r.segment_start = {0, 4};  // a kill: the second schedule ran iterations 4 and 5
  const std::vector<double> first = r.iteration_times_s(0);
  REQUIRE(first.size() == 3);
  CHECK(first[0] == doctest::Approx(150e-9));
  CHECK(first[1] == doctest::Approx(170e-9));
  CHECK(first[2] == doctest::Approx(180e-9));
  CHECK(r.iteration_time_s(0) == doctest::Approx((150 + 170 + 180) / 3.0 * 1e-9));
  const std::vector<double> second = r.iteration_times_s(1);
  REQUIRE(second.size() == 1);
  CHECK(second[0] == doctest::Approx(300e-9));
}
