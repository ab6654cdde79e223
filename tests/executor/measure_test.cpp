// The measured profile of the cpu backend: the simulator's input for `recycle validate` and what
// `recycle profile measure` writes.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/parallel.hpp"
#include "executor/cpu_pin.hpp"
#include "executor/measure.hpp"
#include "executor/stage_timer.hpp"
#include "profiles/profile.hpp"

namespace recycle::executor {

TEST_CASE("measured profile: bytes from the shape, times measured, readable as a profile") {
  // 3 layers of width 8, micro-batches of 4 rows, fp32: a layer's matrix of activations is
  // 4 x 8 x 4 = 128 bytes; a chunk keeps three per layer (input, output, dz): 3 x 3 x 128 = 1152;
  // the stage sends one (128); its weights are 3 x (8 x 8 + 8) floats = 864 bytes.
  const StageShape shape{.width = 8, .layers = 3, .microbatch_size = 4};
  const profiles::Profile p = measured_profile(shape, 3, 2, 2, 3, run_load(6, 2, 1));
  REQUIRE(p.stages.size() == 3);
  for (const profiles::StageProfile& s : p.stages) {
    CHECK(s.activation_bytes == 1152);
    CHECK(s.output_bytes == 128);
    CHECK(s.param_bytes == 864);
    CHECK(s.optimizer_state_bytes == 0);
    CHECK(s.forward > 0);
    CHECK(s.backward_input > 0);
    CHECK(s.backward_weight > 0);
    CHECK(s.optimizer > 0);
  }
  CHECK(p.loss > 0);  // timed apart from the stages: only the last virtual stage runs it
  CHECK(p.hardware.gpus_per_node == 2);
  CHECK(p.hardware.intra_node_latency > 0);
  CHECK(p.hardware.intra_node_latency < 1'000'000'000);  // a hand-off takes microseconds
  // What `profile measure` writes, the simulator reads back.
  const profiles::Profile back = profiles::profile_from_json(profiles::to_json(p), "measured");
  CHECK(back.stages.size() == 3);
  CHECK(back.stages[2].activation_bytes == 1152);
  CHECK(back.hardware.intra_node_latency == p.hardware.intra_node_latency);
  CHECK(back.loss == p.loss);
  CHECK(p.hardware.all_reduce_bus_bandwidth > 0);  // timed over 2 ranks
  CHECK(back.hardware.all_reduce_bus_bandwidth == p.hardware.all_reduce_bus_bandwidth);
}

TEST_CASE("the load a stage is timed under: the run's workers, placed as the run places them") {
  // A core each: as many compute at once as workers or cores, whichever is fewer.
  TimingLoad load = run_load(6, 2, 3);
  CHECK(load.concurrent == 2);
  CHECK(load.in_flight == 3);
  CHECK(load.pin_cpus.empty());
  CHECK(run_load(1, 2, 1).concurrent == 1);
  CHECK(run_load(4, 8, 0).in_flight == 1);  // at least one micro-batch
  // Sharing cores: every worker computes at once, kept where the run keeps it.
  load = run_load(4, 2, 2, {0, 1});
  CHECK(load.concurrent == 4);
  CHECK(load.pin_cpus == std::vector<int>{0, 1});
}

namespace {

/// A stage whose operations wait instead of computing: what tells the two clocks apart.
struct WaitingStage {
  std::chrono::milliseconds wait;
  [[nodiscard]] std::vector<float> forward(const std::vector<float>& x, int& /*chunk*/) const {
    std::this_thread::sleep_for(wait);
    return x;
  }
  [[nodiscard]] std::vector<float> backward_input(const std::vector<float>& g,
                                                  int& /*chunk*/) const {
    return g;
  }
  void backward_weight(const int& /*chunk*/) const {}
  void step(double /*rate*/, std::int64_t /*microbatches*/) const {}
};

cpu_set_t affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(pthread_getaffinity_np(pthread_self(), sizeof(set), &set) == 0);
  return set;
}

}  // namespace

TEST_CASE("timing: by the wall clock, or kept on the run's cores by the thread's processor time") {
  const std::vector<float> x(4, 1.0F);
  const auto loss = [](const std::vector<float>& out, const std::vector<float>&,
                       std::vector<float>& gradient) {
    gradient = out;
    return 0.0;
  };
  const int cpu = usable_cpus().front();
  std::mutex mutex;
  std::set<int> cpus;  // where each thread made its stage
  const auto make = [&] {
    const std::lock_guard lock(mutex);
    cpus.insert(sched_getcpu());
    return WaitingStage{std::chrono::milliseconds(5)};
  };
  // Unpinned: a 5 ms wait is 5 ms of wall clock.
  const MeasuredStage wall = time_stage<int>(
      make, x, x, loss, 3, TimingLoad{.concurrent = 1, .in_flight = 1, .pin_cpus = {}});
  CHECK(wall.cost.forward >= 5'000'000);
  // Three threads kept on one cpu: each made its stage there, and waiting takes no processor
  // time (a sleep's system call costs microseconds).
  cpus.clear();
  const cpu_set_t before = affinity();
  const MeasuredStage pinned = time_stage<int>(
      make, x, x, loss, 3, TimingLoad{.concurrent = 3, .in_flight = 2, .pin_cpus = {cpu}});
  CHECK(cpus == std::set<int>{cpu});
  CHECK(pinned.cost.forward < 2'500'000);
  const cpu_set_t after = affinity();
  CHECK(CPU_EQUAL(&before, &after));  // the caller's thread stays where it was
}

TEST_CASE("a thread's processor time advances while it computes, not while it waits") {
  const std::int64_t start = thread_cpu_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(thread_cpu_ns() - start < 10'000'000);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  const std::int64_t busy = thread_cpu_ns();
  volatile std::uint64_t spin = 0;
  while (std::chrono::steady_clock::now() < until) spin = spin + 1;
  CHECK(thread_cpu_ns() - busy >
        2'000'000);  // at least a tenth of the core, even on a loaded machine
}

TEST_CASE("bus bandwidth: 2 (n - 1) / n x bytes over the time") {
  // 4 ranks, 1000 bytes in 1500 ns: 1500 bytes moved per rank at 1 byte per ns.
  CHECK(bus_bandwidth(1000, 4, 1500) == doctest::Approx(1e9));
  CHECK(bus_bandwidth(1000, 2, 500) == doctest::Approx(2e9));  // 1000 bytes in 500 ns
  CHECK(bus_bandwidth(1000, 1, 500) == 0);                     // one rank moves nothing
  CHECK(bus_bandwidth(0, 2, 500) == 0);
}

}  // namespace recycle::executor
