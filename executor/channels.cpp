#include "executor/channels.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace recycle::executor {

bool Abort::raise_here(const std::string& reason) {
  std::vector<std::pair<std::condition_variable*, std::mutex*>> watched;
  bool first = false;
  {
    const std::lock_guard lock(mutex_);
    first = !raised_;
    if (first) reason_ = reason;
    raised_ = true;
    watched = watched_;
  }
  for (auto& [cv, m] : watched) {
    const std::lock_guard lock(*m);  // a waiter between its check and its wait sees the flag
    cv->notify_all();
  }
  return first;
}

void Abort::raise(const std::string& reason) {
  if (!raise_here(reason)) return;
  std::function<void(const std::string&)> forwarder;
  {
    const std::lock_guard lock(mutex_);
    forwarder = forwarder_;
  }
  if (forwarder) forwarder(reason);
}

void Abort::raise_forwarded(const std::string& reason) {
  static_cast<void>(raise_here(reason));
}

void Abort::forward_to(std::function<void(const std::string&)> forwarder) {
  const std::lock_guard lock(mutex_);
  forwarder_ = std::move(forwarder);
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

std::pair<std::size_t, std::size_t> shard_of(std::size_t size, std::size_t ranks,
                                             std::size_t rank) {
  return {rank * size / ranks, (rank + 1) * size / ranks};
}

void reduce_shard(std::span<std::vector<float>* const> slots, std::size_t rank) {
  const auto [begin, end] = shard_of(slots.front()->size(), slots.size(), rank);
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
    const auto [begin, end] = shard_of(slots.front()->size(), slots.size(), q);
    std::copy(slots[q]->begin() + static_cast<std::ptrdiff_t>(begin),
              slots[q]->begin() + static_cast<std::ptrdiff_t>(end),
              slots[rank]->begin() + static_cast<std::ptrdiff_t>(begin));
  }
}

}  // namespace recycle::executor
