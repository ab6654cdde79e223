#include "executor/channels.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace recycle::executor {

void Abort::raise(const std::string& reason) {
  std::vector<std::pair<std::condition_variable*, std::mutex*>> watched;
  {
    const std::lock_guard lock(mutex_);
    if (!raised_) reason_ = reason;
    raised_ = true;
    watched = watched_;
  }
  for (auto& [cv, m] : watched) {
    const std::lock_guard lock(*m);  // a waiter between its check and its wait sees the flag
    cv->notify_all();
  }
}

bool Abort::raised() const {
  const std::lock_guard lock(mutex_);
  return raised_;
}

std::string Abort::reason() const {
  const std::lock_guard lock(mutex_);
  return reason_;
}

void Abort::watch(std::condition_variable* cv, std::mutex* m) {
  const std::lock_guard lock(mutex_);
  watched_.emplace_back(cv, m);
}

namespace {

/// Shard `rank` of a vector of `size` elements cut into `ranks` shards: [begin, end).
std::pair<std::size_t, std::size_t> shard(std::size_t size, std::size_t ranks, std::size_t rank) {
  return {rank * size / ranks, (rank + 1) * size / ranks};
}

}  // namespace

void reduce_shard(std::span<std::vector<float>* const> slots, std::size_t rank) {
  const auto [begin, end] = shard(slots.front()->size(), slots.size(), rank);
  float* out = slots[rank]->data();
  for (std::size_t i = begin; i < end; ++i) {
    float sum = (*slots.front())[i];
    for (std::size_t r = 1; r < slots.size(); ++r) sum += (*slots[r])[i];
    out[i] = sum;
  }
}

void gather_shards(std::span<std::vector<float>* const> slots, std::size_t rank) {
  for (std::size_t q = 0; q < slots.size(); ++q) {
    if (q == rank) continue;
    const auto [begin, end] = shard(slots.front()->size(), slots.size(), q);
    std::copy(slots[q]->begin() + static_cast<std::ptrdiff_t>(begin),
              slots[q]->begin() + static_cast<std::ptrdiff_t>(end),
              slots[rank]->begin() + static_cast<std::ptrdiff_t>(begin));
  }
}

AllReduceGroup::AllReduceGroup(std::int32_t ranks, Abort& abort)
    : ranks_(ranks), abort_(abort), slots_(static_cast<std::size_t>(ranks), nullptr) {
  abort_.watch(&cv_, &mutex_);
}

void AllReduceGroup::phase(std::unique_lock<std::mutex>& lock, const std::string& what) {
  const std::uint64_t generation = generation_;
  if (++arrived_ == ranks_) {
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
    return;
  }
  wait_for(
      lock, cv_, abort_, [&] { return generation_ != generation; }, what);
}

void AllReduceGroup::all_reduce(std::int32_t rank, std::vector<float>& data,
                                const std::string& what) {
  if (ranks_ == 1) return;  // a stage with one live replica: its gradient is the sum
  const auto r = static_cast<std::size_t>(rank);
  std::unique_lock lock(mutex_);
  slots_[r] = &data;
  phase(lock, what);  // every rank's vector is in place
  for (const std::vector<float>* slot : slots_) {
    if (slot->size() != data.size()) {
      throw std::runtime_error(what + ": the ranks' vectors differ in size");
    }
  }
  lock.unlock();
  reduce_shard(slots_, r);
  lock.lock();
  phase(lock, what);  // every shard is reduced
  lock.unlock();
  gather_shards(slots_, r);
  lock.lock();
  phase(lock, what);  // nobody reads this rank's vector any more
}

}  // namespace recycle::executor
