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
  const profiles::Profile p = measured_profile(shape, 3, 2, 3);
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
}

}  // namespace recycle::executor
