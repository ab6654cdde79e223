// The heartbeat monitor reports the worker that stopped beating, once, and no live worker.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "executor/heartbeat.hpp"

using namespace recycle::executor;
using Clock = std::chrono::steady_clock;

namespace {

struct Report {
  std::mutex mutex;
  std::condition_variable cv;
  std::optional<std::size_t> worker;
  Clock::time_point last, when;
  int calls = 0;

  auto callback() {
    return [this](std::size_t w, Clock::time_point l, Clock::time_point t) {
      const std::lock_guard lock(mutex);
      worker = w;
      last = l;
      when = t;
      ++calls;
      cv.notify_all();
    };
  }
};

}  // namespace

TEST_CASE("the worker that stops beating is reported after its missed beats") {
  const HeartbeatConfig config{std::chrono::milliseconds(20), 3};
  Report report;
  Clock::time_point started, stopped;
  {
    started = Clock::now();
    Heartbeats beats(4, config, report.callback());
    stopped = Clock::now();
    beats.stop_beating(2);
    std::unique_lock lock(report.mutex);
    REQUIRE(report.cv.wait_for(lock, std::chrono::seconds(30), [&] { return report.calls > 0; }));
  }
  CHECK(report.calls == 1);
  CHECK(report.worker == std::size_t{2});
  // It is reported only when its last beat is more than `missed` periods old, and that beat was
  // made while it was still beating.
  CHECK(report.when - report.last > config.period * config.missed);
  CHECK(report.last >= started);
  CHECK(report.when > stopped);
}

TEST_CASE("workers that keep beating are never reported") {
  Report report;
  {
    Heartbeats beats(3, {std::chrono::milliseconds(20), 10}, report.callback());
    std::unique_lock lock(report.mutex);
    report.cv.wait_for(lock, std::chrono::milliseconds(500), [&] { return report.calls > 0; });
  }
  CHECK(report.calls == 0);
}
