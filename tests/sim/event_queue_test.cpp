// The engine's queue: time order, insertion order at equal times, cancellation.
#include <doctest/doctest.h>

#include <vector>

#include "sim/event_queue.hpp"

using recycle::sim::EventQueue;

namespace {

std::vector<std::int32_t> drain(EventQueue& q) {
  std::vector<std::int32_t> subjects;
  while (const auto e = q.pop()) subjects.push_back(e->subject);
  return subjects;
}

}  // namespace

TEST_CASE("events come out by time, and in push order at equal times") {
  EventQueue q;
  q.push(30, 0, 1);
  q.push(10, 0, 2);
  q.push(20, 0, 3);
  q.push(10, 0, 4);  // same time as subject 2, pushed later: comes out after it
  q.push(10, 0, 5);
  CHECK(drain(q) == std::vector<std::int32_t>{2, 4, 5, 3, 1});
  CHECK(q.now() == 30);
  CHECK(q.popped() == 5);
}

TEST_CASE("a cancelled event is never popped, cancelling twice or after the pop is harmless") {
  EventQueue q;
  const auto a = q.push(5, 0, 1);
  const auto b = q.push(5, 0, 2);
  q.push(7, 0, 3);
  q.cancel(b);
  q.cancel(b);
  CHECK(q.pop()->subject == 1);
  q.cancel(a);  // already popped
  CHECK(drain(q) == std::vector<std::int32_t>{3});
  CHECK(q.popped() == 2);
}

TEST_CASE("events pushed while draining keep the order, also at the current time") {
  EventQueue q;
  q.push(0, 0, 0);
  std::vector<std::int32_t> seen;
  while (const auto e = q.pop()) {
    seen.push_back(e->subject);
    if (e->subject < 4) {
      q.push(e->time + 1, 0, e->subject + 10);  // later
      q.push(e->time, 0, e->subject + 1);       // now, after everything already queued for now
    }
  }
  CHECK(seen == std::vector<std::int32_t>{0, 1, 2, 3, 4, 10, 11, 12, 13});
}

TEST_CASE("a large random workload comes out sorted by (time, push order)") {
  EventQueue q;
  std::uint64_t x = 12345;
  for (std::int32_t i = 0; i < 10'000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;  // a fixed LCG: the same every run
    q.push(static_cast<recycle::Nanos>((x >> 33) % 1000), 0, i);
  }
  recycle::Nanos last_time = -1;
  std::int32_t last_subject = -1;
  std::size_t count = 0;
  while (const auto e = q.pop()) {
    const bool ordered = e->time > last_time || (e->time == last_time && e->subject > last_subject);
    REQUIRE(ordered);
    last_time = e->time;
    last_subject = e->subject;
    ++count;
  }
  CHECK(count == 10'000);
}
