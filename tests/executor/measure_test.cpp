// The measured profile of the cpu backend: the simulator's input for `recycle validate` and what
// `recycle profile measure` writes.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "executor/measure.hpp"
#include "profiles/profile.hpp"

namespace recycle::executor {

TEST_CASE("measured profile: bytes from the shape, times measured, readable as a profile") {
  // 3 layers of width 8, micro-batches of 4 rows, fp32: a layer's matrix of activations is
  // 4 x 8 x 4 = 128 bytes; a chunk keeps three per layer (input, output, dz): 3 x 3 x 128 = 1152;
  // the stage sends one (128); its weights are 3 x (8 x 8 + 8) floats = 864 bytes.
  const StageShape shape{.width = 8, .layers = 3, .microbatch_size = 4};
  const profiles::Profile p = measured_profile(shape, 3, 2, 2, 3);
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
  CHECK(p.hardware.gpus_per_node == 2);
  CHECK(p.hardware.intra_node_latency > 0);
  CHECK(p.hardware.intra_node_latency < 1'000'000'000);  // a hand-off takes microseconds
  // What `profile measure` writes, the simulator reads back.
  const profiles::Profile back = profiles::profile_from_json(profiles::to_json(p), "measured");
  CHECK(back.stages.size() == 3);
  CHECK(back.stages[2].activation_bytes == 1152);
  CHECK(back.hardware.intra_node_latency == p.hardware.intra_node_latency);
  CHECK(p.hardware.all_reduce_bus_bandwidth > 0);  // timed over 2 ranks
  CHECK(back.hardware.all_reduce_bus_bandwidth == p.hardware.all_reduce_bus_bandwidth);
}

TEST_CASE("bus bandwidth: 2 (n - 1) / n x bytes over the time") {
  // 4 ranks, 1000 bytes in 1500 ns: 1500 bytes moved per rank at 1 byte per ns.
  CHECK(bus_bandwidth(1000, 4, 1500) == doctest::Approx(1e9));
  CHECK(bus_bandwidth(1000, 2, 500) == doctest::Approx(2e9));  // 1000 bytes in 500 ns
  CHECK(bus_bandwidth(1000, 1, 500) == 0);                     // one rank moves nothing
  CHECK(bus_bandwidth(0, 2, 500) == 0);
}

}  // namespace recycle::executor
