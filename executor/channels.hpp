// In-process communication between worker threads: point-to-point mailboxes, an all-reduce over a
// stage's live replicas, and a barrier. Every wait gives up when the run is aborted (a worker
// failed) or when it exceeds the run's time limit, so a run never hangs.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace recycle::executor {

/// Shared by every wait of one run.
class Abort {
 public:
  explicit Abort(std::chrono::milliseconds limit) : limit_(limit) {}
  /// Stops every wait; the first reason is kept.
  void raise(const std::string& reason);
  [[nodiscard]] bool raised() const;
  [[nodiscard]] std::string reason() const;
  [[nodiscard]] std::chrono::milliseconds limit() const noexcept { return limit_; }
  /// Called by waits to be woken up by raise().
  void watch(std::condition_variable* cv, std::mutex* m);

 private:
  mutable std::mutex mutex_;
  bool raised_ = false;
  std::string reason_;
  std::chrono::milliseconds limit_;
  std::vector<std::pair<std::condition_variable*, std::mutex*>> watched_;
};

/// What a message carries: (kind, virtual stage, owner, micro-batch, iteration).
using MessageKey = std::tuple<std::int32_t, std::int32_t, std::int32_t, std::int32_t, std::int64_t>;

/// One worker's incoming messages.
class Mailbox {
 public:
  explicit Mailbox(Abort& abort) : abort_(abort) { abort_.watch(&cv_, &mutex_); }
  void deliver(const MessageKey& key, std::vector<float> data);
  /// Waits for the message; throws std::runtime_error naming `what` when aborted or past the limit.
  std::vector<float> take(const MessageKey& key, const std::string& what);

 private:
  Abort& abort_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<MessageKey, std::vector<float>> messages_;
};

/// Sums one vector over a fixed group of ranks, in rank order (so the result does not depend on
/// which thread arrives first), and hands every rank the sum. Reusable round after round.
class AllReduceGroup {
 public:
  AllReduceGroup(std::int32_t ranks, Abort& abort);
  void all_reduce(std::int32_t rank, std::vector<float>& data, const std::string& what);

 private:
  std::int32_t ranks_;
  Abort& abort_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::vector<float>> slots_;
  std::vector<float> sum_;
  std::int32_t arrived_ = 0;
  std::int32_t left_ = 0;
  bool closing_ = false;  ///< the sum is ready and not every rank has taken it yet
};

/// Every rank waits until all have arrived; reusable.
class Barrier {
 public:
  Barrier(std::int32_t ranks, Abort& abort) : group_(ranks, abort) {}
  void wait(std::int32_t rank, const std::string& what) {
    std::vector<float> none;
    group_.all_reduce(rank, none, what);
  }

 private:
  AllReduceGroup group_;
};

}  // namespace recycle::executor
