// In-process communication between worker threads: point-to-point mailboxes, an all-reduce over a
// stage's live replicas, and a barrier. Every wait gives up when the run is aborted (a worker
// failed) or when it exceeds the run's time limit, so a run never hangs.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace recycle::executor {

/// Shared by every wait of one run.
class Abort {
 public:
  explicit Abort(std::chrono::milliseconds limit) : limit_(limit) {}
  /// Stops every wait; the first reason is kept. The first raise is also handed to the
  /// forwarder, if one is set (a multi-process run tells the other processes).
  void raise(const std::string& reason);
  /// Stops every wait for a reason another process forwarded (not forwarded again).
  void raise_forwarded(const std::string& reason);
  void forward_to(std::function<void(const std::string&)> forwarder);
  [[nodiscard]] bool raised() const;
  [[nodiscard]] std::string reason() const;
  [[nodiscard]] std::chrono::milliseconds limit() const noexcept { return limit_; }
  /// Called by waits to be woken up by raise().
  void watch(std::condition_variable* cv, std::mutex* m);

 private:
  mutable std::mutex mutex_;
  /// Sets the flag; true when this call raised it first.
  bool raise_here(const std::string& reason);

  bool raised_ = false;
  std::string reason_;
  std::function<void(const std::string&)> forwarder_;
  std::chrono::milliseconds limit_;
  std::vector<std::pair<std::condition_variable*, std::mutex*>> watched_;
};

/// What a message carries: (kind, virtual stage, owner, micro-batch, iteration).
using MessageKey = std::tuple<std::int32_t, std::int32_t, std::int32_t, std::int32_t, std::int64_t>;

/// What a waiting thread does in a multi-process run: `take_in` takes in at most one message
/// from another process (the message may be what it waits for) and says whether it took one;
/// when none came, the thread looks again after `period`.
struct Poll {
  std::function<bool()> take_in;
  std::chrono::microseconds period{20};
  explicit operator bool() const noexcept { return static_cast<bool>(take_in); }
};

/// Waits on `cv` until `ready()`; throws std::runtime_error naming `what` when the run is aborted
/// or the limit passes. With `poll`, the waiting thread also takes in other processes' messages
/// while it waits (its core would be idle), `lock` released meanwhile.
template <typename Ready>
void wait_for(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, Abort& abort,
              const Ready& ready, const std::string& what, const Poll& poll = {}) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + abort.limit();
  while (!ready()) {
    if (abort.raised()) throw std::runtime_error("stopped while waiting for " + what);
    if (poll) {
      lock.unlock();
      const bool took = poll.take_in();
      lock.lock();
      if (ready()) break;
      if (took && Clock::now() < deadline) continue;
    }
    const auto until = poll ? std::min(deadline, Clock::now() + poll.period) : deadline;
    if (cv.wait_until(lock, until) == std::cv_status::timeout && !ready() &&
        Clock::now() >= deadline) {
      throw std::runtime_error("waited over " + std::to_string(abort.limit().count() / 1000) +
                               " s for " + what);
    }
  }
}

/// One worker's incoming messages, of a backend's tensor type.
template <class Tensor = std::vector<float>>
class Mailbox {
 public:
  explicit Mailbox(Abort& abort) : abort_(abort) { abort_.watch(&cv_, &mutex_); }
  void deliver(const MessageKey& key, Tensor data) {
    {
      const std::lock_guard lock(mutex_);
      messages_.insert_or_assign(key, std::move(data));
    }
    cv_.notify_all();
  }
  /// In a multi-process run: a thread waiting in take() polls for other processes' messages.
  void poll_while_waiting(Poll poll) { poll_ = std::move(poll); }
  /// Waits for the message; throws std::runtime_error naming `what` when aborted or past the limit.
  Tensor take(const MessageKey& key, const std::string& what) {
    std::unique_lock lock(mutex_);
    wait_for(
        lock, cv_, abort_, [&] { return messages_.count(key) != 0; }, what, poll_);
    auto it = messages_.find(key);
    Tensor out = std::move(it->second);
    messages_.erase(it);
    return out;
  }

 private:
  Abort& abort_;
  Poll poll_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<MessageKey, Tensor> messages_;
};

/// One rank's share of an all-reduce over `slots` (every rank's vector, the same size), as the
/// all-reduce below splits it: the vectors are cut into one shard per rank (shard r: elements
/// [r x size / n, (r + 1) x size / n)).
///  - reduce_shard: rank `rank` sums its shard over every slot, in rank order, into its own slot;
///  - gather_shards: after every rank has reduced its shard, rank `rank` copies the others'
///    reduced shards into its own slot.
/// Each rank reads every slot once and writes its own: about 2 (n - 1) / n of the vector per
/// rank, as a ring all-reduce moves. Used by AllReduceGroup and timed by
/// executor/measure.hpp's measure_all_reduce, so what is timed is what runs.
void reduce_shard(std::span<std::vector<float>* const> slots, std::size_t rank);
/// Shard `rank` of a vector of `size` elements cut into `ranks` shards: [begin, end).
[[nodiscard]] std::pair<std::size_t, std::size_t> shard_of(std::size_t size, std::size_t ranks,
                                                           std::size_t rank);
void gather_shards(std::span<std::vector<float>* const> slots, std::size_t rank);

/// The cpu backend's shard operations for AllReduceGroup (reduce_shard, gather_shards above).
struct HostShards {
  static void reduce(std::span<std::vector<float>* const> slots, std::size_t rank) {
    reduce_shard(slots, rank);
  }
  static void gather(std::span<std::vector<float>* const> slots, std::size_t rank) {
    gather_shards(slots, rank);
  }
};

/// Sums one vector over a fixed group of ranks and hands every rank the sum, each rank doing an
/// equal share of the work on its own thread (Shards::reduce, then Shards::gather: for the cpu
/// backend reduce_shard and gather_shards, for ranks sharing a GPU their device versions). Each
/// element is summed in rank order, so the result does not depend on which thread arrives first
/// nor on the number of shards. Reusable round after round.
template <class Tensor = std::vector<float>, class Shards = HostShards>
class AllReduceGroup {
 public:
  AllReduceGroup(std::int32_t ranks, Abort& abort, Shards shards = {})
      : ranks_(ranks),
        abort_(abort),
        shards_(std::move(shards)),
        slots_(static_cast<std::size_t>(ranks), nullptr) {
    abort_.watch(&cv_, &mutex_);
  }

  void all_reduce(std::int32_t rank, Tensor& data, const std::string& what) {
    if (ranks_ == 1) return;  // a stage with one live replica: its gradient is the sum
    const auto r = static_cast<std::size_t>(rank);
    std::unique_lock lock(mutex_);
    slots_[r] = &data;
    phase(lock, what);  // every rank's vector is in place
    for (const Tensor* slot : slots_) {
      if (slot->size() != data.size())
        throw std::runtime_error(what + ": the ranks' vectors differ in size");
    }
    lock.unlock();
    shards_.reduce(std::span<Tensor* const>(slots_), r);
    lock.lock();
    phase(lock, what);  // every shard is reduced
    lock.unlock();
    shards_.gather(std::span<Tensor* const>(slots_), r);
    lock.lock();
    phase(lock, what);  // nobody reads this rank's vector any more
  }

 private:
  /// Waits until every rank has called it in this phase (a reusable counting barrier).
  void phase(std::unique_lock<std::mutex>& lock, const std::string& what) {
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

  std::int32_t ranks_;
  Abort& abort_;
  Shards shards_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Tensor*> slots_;
  std::int32_t arrived_ = 0;
  std::uint64_t generation_ = 0;  ///< phases completed
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
  AllReduceGroup<> group_;
};

}  // namespace recycle::executor
