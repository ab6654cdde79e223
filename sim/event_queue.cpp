#include "sim/event_queue.hpp"

#include "core/error.hpp"

namespace recycle::sim {

EventId EventQueue::push(Nanos time, std::uint32_t kind, std::int32_t subject) {
  RECYCLE_ASSERT(time >= now_, "an event was scheduled in the past");
  const EventId id = next_id_++;
  heap_.push_back(Event{time, id, kind, subject});
  sift_up(heap_.size() - 1);
  return id;
}

void EventQueue::cancel(EventId id) {
  if (id < next_id_) dead_.insert(id);
}

std::optional<Event> EventQueue::pop() {
  while (!heap_.empty()) {
    const Event top = heap_.front();
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
    if (!dead_.empty() && dead_.erase(top.id) > 0) continue;
    now_ = top.time;
    ++popped_;
    return top;
  }
  return std::nullopt;
}

void EventQueue::sift_up(std::size_t i) noexcept {
  const Event moving = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!before(moving, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = moving;
}

void EventQueue::sift_down(std::size_t i) noexcept {
  const std::size_t n = heap_.size();
  const Event moving = heap_[i];
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
    if (!before(heap_[child], moving)) break;
    heap_[i] = heap_[child];
    i = child;
  }
  heap_[i] = moving;
}

}  // namespace recycle::sim
