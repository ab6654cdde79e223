// A random profile for the simulator's randomized tests: stages whose times and bytes differ, on
// nodes of 8 GPUs with 1, 2 or 4 GPUs a worker, so transfers cross nodes or stay inside them.
#pragma once

#include <cstdint>

#include "core/rng.hpp"
#include "profiles/profile.hpp"

namespace recycle::sim_test {

/// A profile of `pp` stages with unequal times and bytes.
inline profiles::Profile random_profile(Rng& rng, std::int32_t pp) {
  const auto draw = [&](std::uint64_t n) { return static_cast<std::int64_t>(rng.below(n)); };
  profiles::Profile p;
  p.name = "random";
  p.tensor_parallel = std::int32_t{1} << draw(3);
  p.hardware.gpus_per_node = 8;
  p.hardware.intra_node_bandwidth = 1e11 + 1e9 * static_cast<double>(draw(100));
  p.hardware.inter_node_bandwidth = 1e10 + 1e9 * static_cast<double>(draw(20));
  p.hardware.intra_node_latency = 1'000 + draw(5'000);
  p.hardware.inter_node_latency = 5'000 + draw(20'000);
  for (std::int32_t s = 0; s < pp; ++s) {
    profiles::StageProfile st;
    st.forward = 1'000'000 + draw(9'000'000);
    st.backward_input = 1'000'000 + draw(12'000'000);
    st.backward_weight = draw(8'000'000);
    st.optimizer = draw(3'000'000);
    st.output_bytes = 1'000'000 + draw(200'000'000);
    st.param_bytes = 1'000'000 + draw(2'000'000'000);
    p.stages.push_back(st);
  }
  return p;
}

}  // namespace recycle::sim_test
