#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "core/json.hpp"
#include "planner/timing/profile_costs.hpp"
#include "profiles/profile.hpp"

namespace {

// Two stages: stage 0 F 10 ms, I 12 ms, W 8 ms, optimizer 4 ms; stage 1 twice the times, optimizer
// 6 ms.
const char* kTwoStages = R"({
  "stages": [
    {"forward_s": 0.010, "backward_input_s": 0.012, "backward_weight_s": 0.008, "optimizer_s": 0.004,
     "activation_bytes": 1000, "output_bytes": 200, "param_bytes": 4000},
    {"forward_s": 0.020, "backward_input_s": 0.024, "backward_weight_s": 0.016, "optimizer_s": 0.006,
     "activation_bytes": 2000, "output_bytes": 400, "param_bytes": 8000}],
  "hardware": {"gpus_per_node": 8, "intra_node_bandwidth_Bps": 3e11, "inter_node_bandwidth_Bps": 5e10,
               "intra_node_latency_s": 5e-6, "inter_node_latency_s": 1e-5, "memory_bytes": 1000}})";

}  // namespace

TEST_CASE("costs_from_profile splits a stage over its interleave chunks") {
  const auto p =
      recycle::profiles::profile_from_json(recycle::parse_json(kTwoStages, "p.json"), "p.json");
  const auto costs = recycle::planner::costs_from_profile(p, {1, 2, 4, 2}, "p.json");
  REQUIRE(costs.virtual_stages.size() == 4);
  // Virtual stage 3 is chunk 1 of stage 1: 20 ms / 2 chunks = 10 ms forward.
  CHECK(costs.virtual_stages[3].forward == 10'000'000);
  CHECK(costs.virtual_stages[2].backward_weight == 4'000'000);  // stage 0: 8 ms / 2
  CHECK(costs.optimizer == std::vector<recycle::Nanos>{4'000'000, 6'000'000});
  CHECK_THROWS_WITH_AS((void)recycle::planner::costs_from_profile(p, {1, 3, 4, 1}, "p.json"),
                       "p.json: the profile has 2 stages but the pipeline has 3 stages",
                       recycle::InputError);
}

TEST_CASE("costs_from_profile adds the loss to the last virtual stage's I alone") {
  std::string text = kTwoStages;
  text.replace(text.find("\"stages\""), 0, "\"loss_s\": 0.002, ");
  const auto p =
      recycle::profiles::profile_from_json(recycle::parse_json(text, "p.json"), "p.json");
  using recycle::planner::Layout;
  using recycle::planner::Placement;
  SUBCASE("one chunk a stage: stage 1's I, 24 + 2 ms") {
    const auto costs = recycle::planner::costs_from_profile(p, {1, 2, 4, 1}, "p.json");
    CHECK(costs.virtual_stages[0].backward_input == 12'000'000);
    CHECK(costs.virtual_stages[1].backward_input == 26'000'000);
    CHECK(costs.virtual_stages[1].forward == 20'000'000);
    CHECK(costs.virtual_stages[1].backward_weight == 16'000'000);
  }
  SUBCASE("interleaved, looped: virtual stage 3 (stage 1's second chunk), 24 / 2 + 2 ms") {
    const auto costs = recycle::planner::costs_from_profile(p, {1, 2, 4, 2}, "p.json");
    CHECK(costs.virtual_stages[1].backward_input == 12'000'000);  // stage 1's first chunk
    CHECK(costs.virtual_stages[3].backward_input == 14'000'000);
    CHECK(costs.virtual_stages[2].backward_input == 6'000'000);
  }
  SUBCASE("V placement: virtual stage 3 is stage 0's second chunk, 12 / 2 + 2 ms") {
    const auto costs =
        recycle::planner::costs_from_profile(p, Layout{1, 2, 4, 2, Placement::kV}, "p.json");
    CHECK(costs.virtual_stages[0].backward_input == 6'000'000);
    CHECK(costs.virtual_stages[3].backward_input == 8'000'000);
    CHECK(costs.virtual_stages[2].backward_input == 12'000'000);  // stage 1's second chunk
  }
}
