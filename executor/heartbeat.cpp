#include "executor/heartbeat.hpp"

#include <algorithm>
#include <system_error>

#include "core/parallel.hpp"

namespace recycle::executor {

Heartbeats::Heartbeats(std::size_t workers, HeartbeatConfig config, OnFailed on_failed)
    : Heartbeats(workers, config, std::move(on_failed), std::vector<bool>(workers, true), {}) {}

Heartbeats::Heartbeats(std::size_t workers, HeartbeatConfig config, OnFailed on_failed,
                       const std::vector<bool>& here, OnBeat on_beat)
    : config_(config),
      on_failed_(std::move(on_failed)),
      on_beat_(std::move(on_beat)),
      last_beat_(workers),
      beating_(workers) {
  const Clock::rep now = Clock::now().time_since_epoch().count();
  for (std::size_t w = 0; w < workers; ++w) {
    last_beat_[w] = now;
    beating_[w] = true;
  }
  threads_.reserve(workers + 1);
  const std::size_t wanted =
      static_cast<std::size_t>(std::count(here.begin(), here.end(), true)) + 1;
  try {
    for (std::size_t w = 0; w < workers; ++w) {
      if (here.at(w)) threads_.emplace_back([this, w] { beat(w); });
    }
    threads_.emplace_back([this] { monitor(); });
  } catch (const std::system_error& e) {
    const std::size_t started = threads_.size();
    stop();  // no destructor runs for an object whose constructor throws
    refuse_thread(started, wanted, e, "validate");
  }
}

void Heartbeats::stop() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

Heartbeats::~Heartbeats() {
  stop();
}

void Heartbeats::stop_beating(std::size_t worker) {
  beating_[worker] = false;
}

void Heartbeats::heard(std::size_t worker) {
  last_beat_.at(worker) = Clock::now().time_since_epoch().count();
}

bool Heartbeats::wait_period() {
  std::unique_lock lock(mutex_);
  return !cv_.wait_for(lock, config_.period, [this] { return stopping_; });
}

void Heartbeats::beat(std::size_t worker) {
  do {
    if (!beating_[worker]) return;
    last_beat_[worker] = Clock::now().time_since_epoch().count();
    if (on_beat_) on_beat_(worker);
  } while (wait_period());
}

void Heartbeats::monitor() {
  const Clock::duration timeout = config_.period * config_.missed;
  while (wait_period()) {
    const Clock::time_point now = Clock::now();
    for (std::size_t w = 0; w < last_beat_.size(); ++w) {
      const Clock::time_point last(Clock::duration(last_beat_[w].load()));
      if (now - last > timeout) {
        on_failed_(w, last, now);
        return;
      }
    }
  }
}

}  // namespace recycle::executor
