// Failure detection by heartbeats, as a training job's agents do it: every live worker has a
// beater that records "I am alive" once per period, independent of what the worker computes or
// waits for; a monitor looks at the last beat of every worker once per period and reports the
// first worker whose last beat is older than `missed` periods. A worker that dies stops beating
// (its beater dies with it); a slow or blocked worker goes on beating and is never reported.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace recycle::executor {

struct HeartbeatConfig {
  std::chrono::milliseconds period{10};
  std::int32_t missed = 5;  ///< beats missed in a row before a worker counts as failed
};

class Heartbeats {
 public:
  using Clock = std::chrono::steady_clock;

  /// Called once, from the monitor thread, for the first worker found silent: the worker, its
  /// last beat, and when the monitor found it (more than `missed` periods after that beat).
  using OnFailed = std::function<void(std::size_t, Clock::time_point, Clock::time_point)>;

  /// Called by a beater after each beat of its worker (a multi-process run sends it on).
  using OnBeat = std::function<void(std::size_t)>;

  /// Starts one beater per worker and the monitor.
  Heartbeats(std::size_t workers, HeartbeatConfig config, OnFailed on_failed);
  /// In a multi-process run: starts beaters only for the workers `here` marks (the others beat
  /// in their own processes, and their beats arrive through heard()), each beat also handed to
  /// `on_beat`, and the monitor of every worker.
  Heartbeats(std::size_t workers, HeartbeatConfig config, OnFailed on_failed,
             const std::vector<bool>& here, OnBeat on_beat);
  ~Heartbeats();
  Heartbeats(const Heartbeats&) = delete;
  Heartbeats& operator=(const Heartbeats&) = delete;

  /// The worker died: its beater stops.
  void stop_beating(std::size_t worker);
  /// A beat of `worker` arrived from another process: it counts from now.
  void heard(std::size_t worker);

 private:
  /// Ends the beats and the monitor and joins their threads.
  void stop();
  void beat(std::size_t worker);
  void monitor();
  /// Waits one period; false when the object is being destroyed.
  bool wait_period();

  HeartbeatConfig config_;
  OnFailed on_failed_;
  OnBeat on_beat_;
  std::vector<std::atomic<Clock::rep>> last_beat_;
  std::vector<std::atomic<bool>> beating_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace recycle::executor
