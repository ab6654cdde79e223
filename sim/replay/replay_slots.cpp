#include "sim/replay/replay_slots.hpp"

#include <algorithm>
#include <bit>

#include "core/error.hpp"

namespace recycle::sim {

NodePool::NodePool(std::int64_t size, std::int64_t first, std::int64_t last)
    : words_(static_cast<std::size_t>((size + 63) / 64), 0) {
  RECYCLE_ASSERT(0 <= first && first <= last && last <= size, "a pool within its nodes");
  for (std::int64_t n = first; n < last;) {
    const auto word = static_cast<std::size_t>(n / 64);
    const std::int64_t bit = n % 64;
    const std::int64_t bits = std::min<std::int64_t>(64 - bit, last - n);
    const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << bits) - 1);
    words_[word] |= mask << bit;
    n += bits;
  }
  count_ = last - first;
  cursor_ = static_cast<std::size_t>(first / 64);
}

void NodePool::insert(std::int64_t node) {
  const auto word = static_cast<std::size_t>(node / 64);
  const std::uint64_t bit = std::uint64_t{1} << (node % 64);
  if ((words_[word] & bit) != 0) return;
  words_[word] |= bit;
  ++count_;
  cursor_ = std::min(cursor_, word);
}

bool NodePool::erase(std::int64_t node) {
  const auto word = static_cast<std::size_t>(node / 64);
  const std::uint64_t bit = std::uint64_t{1} << (node % 64);
  if ((words_[word] & bit) == 0) return false;
  words_[word] &= ~bit;
  --count_;
  return true;
}

bool NodePool::contains(std::int64_t node) const {
  return (words_[static_cast<std::size_t>(node / 64)] >> (node % 64) & 1) != 0;
}

std::int64_t NodePool::lowest() {
  RECYCLE_ASSERT(count_ > 0, "the lowest node of an empty pool");
  while (words_[cursor_] == 0) ++cursor_;
  return static_cast<std::int64_t>(cursor_) * 64 + std::countr_zero(words_[cursor_]);
}

JobSlots::JobSlots(std::int64_t job_nodes, std::int64_t cluster_nodes,
                   const planner::Layout& layout, std::int32_t tensor_parallel,
                   std::int32_t gpus_per_node)
    : active_slots_(job_nodes),
      layout_(layout),
      active_pipelines_(layout.dp),
      tp_(tensor_parallel),
      gpus_per_node_(gpus_per_node),
      slot_of_(static_cast<std::size_t>(cluster_nodes), -1),
      node_of_(static_cast<std::size_t>(job_nodes)),
      spares_(cluster_nodes, job_nodes, cluster_nodes) {
  RECYCLE_ASSERT(job_nodes <= cluster_nodes, "the job fits its cluster");
  RECYCLE_ASSERT(cluster_nodes <= std::int64_t{1} << 30, "slots fit 32 bits");
  for (std::int64_t n = 0; n < job_nodes; ++n) {
    slot_of_[static_cast<std::size_t>(n)] = static_cast<std::int32_t>(n);
    node_of_[static_cast<std::size_t>(n)] = n;
  }
}

std::int64_t JobSlots::node_down(std::int64_t node) {
  std::int32_t& slot = slot_of_[static_cast<std::size_t>(node)];
  spares_.erase(node);
  const std::int64_t held = slot;
  if (held >= 0) {
    empty_.insert(held);
    node_of_[static_cast<std::size_t>(held)] = -1;
  }
  slot = -1;
  return held;
}

void JobSlots::node_ready(std::int64_t node) {
  if (slot_of_[static_cast<std::size_t>(node)] < 0) spares_.insert(node);
}

std::vector<std::int64_t> JobSlots::fill_from_spares(const SlotChoice& choose) {
  std::vector<std::int64_t> filled;
  while (!empty_.empty() && !spares_.empty()) {
    auto chosen = empty_.begin();
    if (choose && empty_.size() > 1) {
      chosen = empty_.find(choose(std::vector<std::int64_t>(empty_.begin(), empty_.end())));
      RECYCLE_ASSERT(chosen != empty_.end(), "a spare fills an empty slot");
    }
    const std::int64_t slot = *chosen;
    const std::int64_t node = spares_.lowest();
    empty_.erase(chosen);
    spares_.erase(node);
    slot_of_[static_cast<std::size_t>(node)] = static_cast<std::int32_t>(slot);
    node_of_[static_cast<std::size_t>(slot)] = node;
    filled.push_back(slot);
  }
  return filled;
}

std::int32_t JobSlots::pipelines_possible() const {
  const std::int64_t pipeline_gpus = std::int64_t{layout_.pp} * tp_;
  if (pipeline_gpus % gpus_per_node_ != 0) return layout_.dp;
  const std::int64_t per_pipeline = pipeline_gpus / gpus_per_node_;
  return static_cast<std::int32_t>(
      std::min<std::int64_t>(layout_.dp, (live_nodes() + spares()) / per_pipeline));
}

void JobSlots::regroup() {
  const std::int64_t pipeline_gpus = std::int64_t{layout_.pp} * tp_;
  if (pipeline_gpus % gpus_per_node_ != 0) {
    fill_from_spares();
    return;
  }
  const std::int64_t per_pipeline = pipeline_gpus / gpus_per_node_;
  const std::int64_t live = live_nodes() + spares();
  const std::int64_t pipelines = std::min<std::int64_t>(layout_.dp, live / per_pipeline);
  const std::int64_t kept = pipelines * per_pipeline;
  // Slots past the kept pipelines are parked: their nodes go to the pool.
  for (std::int64_t slot = kept; slot < active_slots_; ++slot) {
    std::int64_t& node = node_of_[static_cast<std::size_t>(slot)];
    if (node < 0) continue;
    slot_of_[static_cast<std::size_t>(node)] = -1;
    spares_.insert(node);
    node = -1;
  }
  empty_.erase(empty_.lower_bound(kept), empty_.end());
  // Slots of pipelines brought back are empty until filled.
  for (std::int64_t slot = active_slots_; slot < kept; ++slot) empty_.insert(slot);
  active_slots_ = kept;
  active_pipelines_ = static_cast<std::int32_t>(pipelines);
  fill_from_spares();
}

std::vector<planner::WorkerId> JobSlots::workers_of(std::int64_t slot) const {
  std::vector<planner::WorkerId> out;
  const std::int64_t first_gpu = slot * gpus_per_node_;
  const std::int64_t last_gpu = first_gpu + gpus_per_node_ - 1;
  const std::int64_t ranks = std::int64_t{layout_.dp} * layout_.pp;
  for (std::int64_t r = first_gpu / tp_; r <= last_gpu / tp_ && r < ranks; ++r) {
    out.push_back(
        {static_cast<std::int32_t>(r / layout_.pp), static_cast<std::int32_t>(r % layout_.pp)});
  }
  return out;
}

std::vector<planner::WorkerId> JobSlots::failed_workers() const {
  return failed_workers_but(-1);
}

std::vector<planner::WorkerId> JobSlots::failed_workers_but(std::int64_t but) const {
  std::vector<planner::WorkerId> out;
  for (const std::int64_t slot : empty_) {
    if (slot == but) continue;
    const auto workers = workers_of(slot);
    out.insert(out.end(), workers.begin(), workers.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::int64_t JobSlots::live_workers() const {
  return std::int64_t{active_pipelines_} * layout_.pp -
         static_cast<std::int64_t>(failed_workers().size());
}

bool JobSlots::every_stage_live() const {
  std::vector<std::int32_t> down(static_cast<std::size_t>(layout_.pp), 0);
  for (const planner::WorkerId& w : failed_workers()) {
    if (++down[static_cast<std::size_t>(w.stage)] >= active_pipelines_) return false;
  }
  return active_pipelines_ > 0;
}

std::int32_t JobSlots::complete_pipelines() const {
  std::set<std::int32_t> broken;
  for (const planner::WorkerId& w : failed_workers()) broken.insert(w.dp);
  return active_pipelines_ - static_cast<std::int32_t>(broken.size());
}

}  // namespace recycle::sim
