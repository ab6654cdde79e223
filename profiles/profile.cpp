#include "profiles/profile.hpp"

#include <limits>

#include <nlohmann/json.hpp>

#include "core/json.hpp"

namespace recycle::profiles {

namespace {

constexpr double kMaxSeconds = 1e6;

Nanos read_seconds(const JsonView& parent, std::string_view key) {
  const JsonView v = parent.at(key);
  const double s = v.as_nonnegative();
  if (s > kMaxSeconds) v.fail("expected at most " + std::to_string(kMaxSeconds) + " seconds");
  return to_nanos(s);
}

Bytes read_bytes(const JsonView& parent, std::string_view key, Bytes max, bool required = true) {
  if (!required && !parent.has(key)) return 0;
  return parent.at(key).as_int(0, max);
}

BytesPerSecond read_bandwidth(const JsonView& parent, std::string_view key) {
  const JsonView v = parent.at(key);
  const double bw = v.as_double();
  if (!(bw > 0)) v.fail("expected a bandwidth > 0 bytes per second");
  return bw;
}

}  // namespace

Profile profile_from_json(const nlohmann::json& json, const std::string& source) {
  const JsonView root(json, source);
  if (const auto format = root.find("format")) format->check_format("recycle.profile/1");
  Profile p;
  if (const auto name = root.find("name")) p.name = name->as_string();
  if (const auto tp = root.find("tensor_parallel"))
    p.tensor_parallel = static_cast<std::int32_t>(tp->as_int(1, 1024));
  const auto stages = root.at("stages").items();
  if (stages.empty()) root.at("stages").fail("expected at least one stage");
  for (const JsonView& s : stages) {
    StageProfile sp;
    sp.forward = read_seconds(s, "forward_s");
    sp.backward_input = read_seconds(s, "backward_input_s");
    sp.backward_weight = read_seconds(s, "backward_weight_s");
    sp.optimizer = read_seconds(s, "optimizer_s");
    sp.activation_bytes = read_bytes(s, "activation_bytes", kMaxMicrobatchBytes);
    sp.output_bytes = read_bytes(s, "output_bytes", kMaxMicrobatchBytes);
    sp.param_bytes = read_bytes(s, "param_bytes", kMaxStageBytes);
    sp.optimizer_state_bytes = read_bytes(s, "optimizer_state_bytes", kMaxStageBytes, false);
    p.stages.push_back(sp);
  }
  const JsonView hw = root.at("hardware");
  p.hardware.gpus_per_node = static_cast<std::int32_t>(hw.at("gpus_per_node").as_int(1, 1024));
  p.hardware.intra_node_bandwidth = read_bandwidth(hw, "intra_node_bandwidth_Bps");
  p.hardware.inter_node_bandwidth = read_bandwidth(hw, "inter_node_bandwidth_Bps");
  p.hardware.intra_node_latency = read_seconds(hw, "intra_node_latency_s");
  p.hardware.inter_node_latency = read_seconds(hw, "inter_node_latency_s");
  p.hardware.memory_bytes = read_bytes(hw, "memory_bytes", kMaxGpuMemoryBytes);
  if (hw.has("all_reduce_bus_bandwidth_Bps")) {
    p.hardware.all_reduce_bus_bandwidth = read_bandwidth(hw, "all_reduce_bus_bandwidth_Bps");
  }
  if (root.has("loss_s")) p.loss = read_seconds(root, "loss_s");
  if (const auto shards = root.find("optimizer_shards"))
    p.optimizer_shards = static_cast<std::int32_t>(shards->as_int(1, 1 << 20));
  if (const auto copies = root.find("optimizer_shard_copies")) {
    p.optimizer_shard_copies = static_cast<std::int32_t>(copies->as_int(1, 2));
    if (p.optimizer_shard_copies == 2 && p.optimizer_shards < 2)
      copies->fail("expected 1: a replica of each shard needs optimizer_shards >= 2");
  }
  if (p.tensor_parallel > p.hardware.gpus_per_node) {
    root.at("tensor_parallel")
        .fail("expected at most hardware.gpus_per_node (" +
              std::to_string(p.hardware.gpus_per_node) + ")");
  }
  return p;
}

Profile load_profile(const std::string& path) {
  return profile_from_json(load_json(path), path);
}

nlohmann::json to_json(const Profile& profile) {
  nlohmann::json stages = nlohmann::json::array();
  for (const StageProfile& s : profile.stages) {
    stages.push_back({{"forward_s", to_seconds(s.forward)},
                      {"backward_input_s", to_seconds(s.backward_input)},
                      {"backward_weight_s", to_seconds(s.backward_weight)},
                      {"optimizer_s", to_seconds(s.optimizer)},
                      {"activation_bytes", s.activation_bytes},
                      {"output_bytes", s.output_bytes},
                      {"param_bytes", s.param_bytes},
                      {"optimizer_state_bytes", s.optimizer_state_bytes}});
  }
  const HardwareSpec& h = profile.hardware;
  nlohmann::json hardware = {{"gpus_per_node", h.gpus_per_node},
                             {"intra_node_bandwidth_Bps", h.intra_node_bandwidth},
                             {"inter_node_bandwidth_Bps", h.inter_node_bandwidth},
                             {"intra_node_latency_s", to_seconds(h.intra_node_latency)},
                             {"inter_node_latency_s", to_seconds(h.inter_node_latency)},
                             {"memory_bytes", h.memory_bytes}};
  if (h.all_reduce_bus_bandwidth > 0) {
    hardware["all_reduce_bus_bandwidth_Bps"] = h.all_reduce_bus_bandwidth;
  }
  nlohmann::json out = {{"format", "recycle.profile/1"},
                        {"name", profile.name},
                        {"tensor_parallel", profile.tensor_parallel},
                        {"stages", stages},
                        {"hardware", hardware}};
  if (profile.loss > 0) out["loss_s"] = to_seconds(profile.loss);
  if (profile.optimizer_shards > 1) {
    out["optimizer_shards"] = profile.optimizer_shards;
    out["optimizer_shard_copies"] = profile.optimizer_shard_copies;
  }
  return out;
}

}  // namespace recycle::profiles
