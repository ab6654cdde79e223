#include "planner/timing/cost_model.hpp"

#include "planner/timing/profile_costs.hpp"

namespace recycle::planner {

namespace {

Bytes at_or_zero(const std::vector<Bytes>& v, std::int32_t i) noexcept {
  return i >= 0 && static_cast<std::size_t>(i) < v.size() ? v[static_cast<std::size_t>(i)] : 0;
}

}  // namespace

CostModel CostModel::compute_only(Costs costs) {
  CostModel model;
  model.compute = std::move(costs);
  return model;
}

CostModel CostModel::from_profile(const profiles::Profile& profile, const Layout& layout,
                                  const std::string& source) {
  CostModel model;
  model.compute = costs_from_profile(profile, layout, source);
  for (std::int32_t v = 0; v < layout.virtual_stages(); ++v) {
    const profiles::StageProfile& s = profile.stages[static_cast<std::size_t>(layout.stage_of(v))];
    model.activation_bytes.push_back(s.activation_bytes / layout.interleave);
    model.output_bytes.push_back(s.output_bytes);
  }
  for (const profiles::StageProfile& s : profile.stages) {
    model.param_bytes.push_back(s.param_bytes);
    model.state_bytes.push_back(2 * s.param_bytes + s.optimizer_state_bytes);
    model.optimizer_state_bytes.push_back(s.optimizer_state_bytes);
  }
  model.optimizer_shards = profile.optimizer_shards;
  model.optimizer_shard_copies = profile.optimizer_shard_copies;
  model.worker_memory = profile.worker_memory();
  model.cluster = Cluster(profile.hardware, profile.tensor_parallel, layout.pp);
  return model;
}

Bytes CostModel::send_bytes(const Action& send) const noexcept {
  if (send.type == ActionType::kSendF) return at_or_zero(output_bytes, send.virtual_stage);
  if (send.type == ActionType::kSendB) return at_or_zero(output_bytes, send.virtual_stage - 1);
  return 0;
}

Bytes CostModel::held_bytes(std::int32_t virtual_stage) const noexcept {
  return at_or_zero(activation_bytes, virtual_stage);
}

Bytes CostModel::gradient_bytes(std::int32_t stage) const noexcept {
  return at_or_zero(param_bytes, stage);
}

Bytes CostModel::kept_bytes(std::int32_t stage, std::int32_t weight_versions,
                            std::int32_t live_ranks) const noexcept {
  Bytes kept =
      at_or_zero(state_bytes, stage) + (weight_versions - 1) * at_or_zero(param_bytes, stage);
  if (reshards_on_failure() && live_ranks > 0 && live_ranks < optimizer_shards) {
    const Bytes shard = at_or_zero(optimizer_state_bytes, stage);
    kept += (shard * optimizer_shards + live_ranks - 1) / live_ranks - shard;
  }
  return kept;
}

}  // namespace recycle::planner
