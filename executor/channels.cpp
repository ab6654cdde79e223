#include "executor/channels.hpp"

#include <stdexcept>

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

/// Waits on `cv` until `ready()`; throws when the run is aborted or the limit passes.
template <typename Ready>
void wait_for(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, Abort& abort,
              const Ready& ready, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + abort.limit();
  while (!ready()) {
    if (abort.raised()) throw std::runtime_error("stopped while waiting for " + what);
    if (cv.wait_until(lock, deadline) == std::cv_status::timeout && !ready()) {
      throw std::runtime_error("waited over " + std::to_string(abort.limit().count() / 1000) +
                               " s for " + what);
    }
  }
}

}  // namespace

void Mailbox::deliver(const MessageKey& key, std::vector<float> data) {
  {
    const std::lock_guard lock(mutex_);
    messages_[key] = std::move(data);
  }
  cv_.notify_all();
}

std::vector<float> Mailbox::take(const MessageKey& key, const std::string& what) {
  std::unique_lock lock(mutex_);
  wait_for(
      lock, cv_, abort_, [&] { return messages_.count(key) != 0; }, what);
  auto it = messages_.find(key);
  std::vector<float> out = std::move(it->second);
  messages_.erase(it);
  return out;
}

AllReduceGroup::AllReduceGroup(std::int32_t ranks, Abort& abort)
    : ranks_(ranks), abort_(abort), slots_(static_cast<std::size_t>(ranks)) {
  abort_.watch(&cv_, &mutex_);
}

void AllReduceGroup::all_reduce(std::int32_t rank, std::vector<float>& data,
                                const std::string& what) {
  if (ranks_ == 1) return;  // a stage with one live replica: its gradient is the sum
  std::unique_lock lock(mutex_);
  wait_for(
      lock, cv_, abort_, [&] { return !closing_; }, what);
  slots_[static_cast<std::size_t>(rank)] = std::move(data);
  if (++arrived_ == ranks_) {
    sum_ = std::move(slots_.front());
    for (std::size_t r = 1; r < slots_.size(); ++r) {
      for (std::size_t i = 0; i < sum_.size(); ++i) sum_[i] += slots_[r][i];
    }
    closing_ = true;
    cv_.notify_all();
  } else {
    wait_for(
        lock, cv_, abort_, [&] { return closing_; }, what);
  }
  if (++left_ == ranks_) {
    data = std::move(sum_);  // the last to leave takes the sum itself, the others a copy
    arrived_ = 0;
    left_ = 0;
    closing_ = false;
    cv_.notify_all();
  } else {
    data = sum_;
  }
}

}  // namespace recycle::executor
