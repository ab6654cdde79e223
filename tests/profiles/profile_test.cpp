#include <doctest/doctest.h>

#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json.hpp"
#include "profiles/profile.hpp"

namespace {

const char* kTwoStages = R"({
  "format": "recycle.profile/1", "name": "tiny", "tensor_parallel": 2,
  "stages": [
    {"forward_s": 0.010, "backward_input_s": 0.012, "backward_weight_s": 0.008, "optimizer_s": 0.004,
     "activation_bytes": 1000, "output_bytes": 200, "param_bytes": 4000},
    {"forward_s": 0.020, "backward_input_s": 0.024, "backward_weight_s": 0.016, "optimizer_s": 0.006,
     "activation_bytes": 2000, "output_bytes": 400, "param_bytes": 8000, "optimizer_state_bytes": 16000}],
  "hardware": {"gpus_per_node": 8, "intra_node_bandwidth_Bps": 3e11, "inter_node_bandwidth_Bps": 5e10,
               "intra_node_latency_s": 5e-6, "inter_node_latency_s": 1e-5, "memory_bytes": 85899345920}})";

std::string error_of(const std::string& text) {
  try {
    (void)recycle::profiles::profile_from_json(recycle::parse_json(text, "p.json"), "p.json");
  } catch (const recycle::InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("profile_from_json reads every field in nanoseconds and bytes") {
  const auto p =
      recycle::profiles::profile_from_json(recycle::parse_json(kTwoStages, "p.json"), "p.json");
  CHECK(p.name == "tiny");
  CHECK(p.tensor_parallel == 2);
  REQUIRE(p.stages.size() == 2);
  CHECK(p.stages[0].forward == 10'000'000);
  CHECK(p.stages[0].backward_input == 12'000'000);
  CHECK(p.stages[0].backward_weight == 8'000'000);
  CHECK(p.stages[1].optimizer == 6'000'000);
  CHECK(p.stages[0].optimizer_state_bytes == 0);
  CHECK(p.stages[1].optimizer_state_bytes == 16000);
  CHECK(p.hardware.gpus_per_node == 8);
  CHECK(p.hardware.inter_node_latency == 10'000);
  CHECK(p.hardware.memory_bytes == 85899345920);
}

TEST_CASE("profile JSON round-trips") {
  const auto p =
      recycle::profiles::profile_from_json(recycle::parse_json(kTwoStages, "p.json"), "p.json");
  const auto q = recycle::profiles::profile_from_json(recycle::profiles::to_json(p), "again");
  CHECK(recycle::profiles::to_json(q) == recycle::profiles::to_json(p));
}

TEST_CASE("an all-reduce bus bandwidth is optional, read and written back") {
  std::string t = kTwoStages;
  const auto absent = recycle::profiles::profile_from_json(recycle::parse_json(t, "p.json"), "p");
  CHECK(absent.hardware.all_reduce_bus_bandwidth == 0);
  CHECK_FALSE(
      recycle::profiles::to_json(absent)["hardware"].contains("all_reduce_bus_bandwidth_Bps"));
  t.replace(t.find("\"memory_bytes\""), 0, "\"all_reduce_bus_bandwidth_Bps\": 2.5e9, ");
  const auto p = recycle::profiles::profile_from_json(recycle::parse_json(t, "p.json"), "p.json");
  CHECK(p.hardware.all_reduce_bus_bandwidth == 2.5e9);
  const auto q = recycle::profiles::profile_from_json(recycle::profiles::to_json(p), "again");
  CHECK(q.hardware.all_reduce_bus_bandwidth == 2.5e9);
  t.replace(t.find("2.5e9"), 5, "0");
  CHECK(error_of(t) ==
        "p.json: hardware.all_reduce_bus_bandwidth_Bps: expected a bandwidth > 0 bytes per second");
}

TEST_CASE("the loss is optional, read and written back") {
  std::string t = kTwoStages;
  const auto absent = recycle::profiles::profile_from_json(recycle::parse_json(t, "p.json"), "p");
  CHECK(absent.loss == 0);
  CHECK_FALSE(recycle::profiles::to_json(absent).contains("loss_s"));
  t.replace(t.find("\"stages\""), 0, "\"loss_s\": 0.0005, ");
  const auto p = recycle::profiles::profile_from_json(recycle::parse_json(t, "p.json"), "p.json");
  CHECK(p.loss == 500'000);
  const auto q = recycle::profiles::profile_from_json(recycle::profiles::to_json(p), "again");
  CHECK(q.loss == 500'000);
  t.replace(t.find("0.0005"), 6, "-1");
  CHECK(error_of(t) == "p.json: loss_s: expected a number >= 0, got -1");
}

TEST_CASE("profile errors name the field") {
  std::string t = kTwoStages;
  CHECK(error_of(R"({"stages": []})") == "p.json: stages: expected at least one stage");
  CHECK(error_of(std::string(t).replace(t.find("0.010"), 5, "-0.01")) ==
        "p.json: stages[0].forward_s: expected a number >= 0, got -0.01");
  CHECK(error_of(
            std::string(t).replace(t.find("\"gpus_per_node\": 8"), 18, "\"gpus_per_node\": 0")) ==
        "p.json: hardware.gpus_per_node: expected an integer in [1, 1024], got 0");
  CHECK(error_of(std::string(t).replace(t.find("\"tensor_parallel\": 2"), 20,
                                        "\"tensor_parallel\": 16")) ==
        "p.json: tensor_parallel: expected at most hardware.gpus_per_node (8)");
  CHECK(error_of(R"({"stages": [{"forward_s": 1}]})") ==
        "p.json: stages[0].backward_input_s: missing field");
}

TEST_CASE("byte counts are bounded so that a worker's sums of them fit 64 bits") {
  // planner/timing/memory.cpp asserts that the sums fit; here, that the reader holds to the bounds.
  std::string t = kTwoStages;
  CHECK(error_of(std::string(t).replace(t.find("1000"), 4, "549755813889")) ==
        "p.json: stages[0].activation_bytes: expected an integer in [0, 549755813888], got "
        "549755813889");
  CHECK(error_of(std::string(t).replace(t.find("8000"), 4, "1125899906842625")) ==
        "p.json: stages[1].param_bytes: expected an integer in [0, 1125899906842624], got "
        "1125899906842625");
  CHECK(error_of(std::string(t).replace(t.find("85899345920"), 11, "1125899906842625")) ==
        "p.json: hardware.memory_bytes: expected an integer in [0, 1125899906842624], got "
        "1125899906842625");
  // The largest of each is read: a worker of 2 GPUs has 2^51 bytes.
  t.replace(t.find("85899345920"), 11, "1125899906842624");
  t.replace(t.find("1000"), 4, "549755813888");
  const auto p = recycle::profiles::profile_from_json(recycle::parse_json(t, "p.json"), "p.json");
  CHECK(p.worker_memory() == std::int64_t{1} << 51);
  CHECK(p.stages[0].activation_bytes == std::int64_t{1} << 39);
}
