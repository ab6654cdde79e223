// The discrete-event engine's queue: pending events ordered by (time, sequence number), so events
// at the same time come out in the order they were pushed. Time is integer nanoseconds. An event
// is cancelled by marking it dead; the heap is never searched, and a dead event is dropped when it
// reaches the top. Nothing here depends on the wall clock or on addresses: the same pushes give
// the same pops.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_set>
#include <vector>

#include "core/units.hpp"

namespace recycle::sim {

/// Identifies a pushed event (its sequence number), for cancel().
using EventId = std::uint64_t;

struct Event {
  Nanos time = 0;
  EventId id = 0;            ///< sequence number: the tie-breaker at equal times
  std::uint32_t kind = 0;    ///< what happens; the meaning belongs to whoever drives the queue
  std::int32_t subject = 0;  ///< to whom (a worker, a transfer, a collective), same owner
};

class EventQueue {
 public:
  /// Schedules an event at `time`, which must not be earlier than the last popped event.
  EventId push(Nanos time, std::uint32_t kind, std::int32_t subject);

  /// Marks a pending event dead; it will never be popped. Cancelling twice, or cancelling an
  /// event already popped, changes nothing (the latter keeps a set entry until the queue dies).
  void cancel(EventId id);

  /// The earliest live event, removed from the queue; nullopt when none is left.
  [[nodiscard]] std::optional<Event> pop();

  /// The event pop() would most likely return next (it may be a cancelled one), or null: for
  /// prefetching what it will need.
  [[nodiscard]] const Event* peek() const noexcept {
    return heap_.empty() ? nullptr : &heap_.front();
  }

  /// Time of the last popped event (0 before the first).
  [[nodiscard]] Nanos now() const noexcept { return now_; }
  /// Events popped so far (cancelled ones not counted).
  [[nodiscard]] std::uint64_t popped() const noexcept { return popped_; }
  /// Pending events, dead ones included until they are dropped.
  [[nodiscard]] std::size_t size() const noexcept { return heap_.size(); }
  [[nodiscard]] bool empty() const noexcept { return heap_.empty(); }

  void reserve(std::size_t events) { heap_.reserve(events); }

 private:
  [[nodiscard]] static bool before(const Event& a, const Event& b) noexcept {
    return a.time < b.time || (a.time == b.time && a.id < b.id);
  }
  void sift_up(std::size_t i) noexcept;
  void sift_down(std::size_t i) noexcept;

  std::vector<Event> heap_;           ///< binary min-heap under before()
  std::unordered_set<EventId> dead_;  ///< only looked up, never iterated: order cannot leak out
  EventId next_id_ = 0;
  Nanos now_ = 0;
  std::uint64_t popped_ = 0;
};

}  // namespace recycle::sim
