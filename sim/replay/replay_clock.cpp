#include "sim/replay/replay_clock.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace recycle::sim {

std::string_view to_string(LostCause cause) noexcept {
  switch (cause) {
    case LostCause::kDetection:
      return "detection";
    case LostCause::kRedo:
      return "redo";
    case LostCause::kRestart:
      return "restart";
    case LostCause::kRepairWait:
      return "repair_wait";
    case LostCause::kDegraded:
      return "degraded";
    case LostCause::kReconfiguration:
      return "reconfiguration";
    case LostCause::kRedundancy:
      return "redundancy";
    case LostCause::kCheckpoint:
      return "checkpoint";
  }
  return "?";
}

JobClock::JobClock(Nanos fault_free, const CheckpointRule& rule)
    : fault_free_(fault_free), rule_(rule) {
  RECYCLE_ASSERT(fault_free > 0 && (rule.interval > 0 || rule.iterations > 0) && rule.write >= 0,
                 "a clock needs a fault-free period and a checkpoint interval");
}

Nanos JobClock::until_checkpoint() const {
  if (!restart_checkpoint_ && rule_.iterations <= 0) return rule_.interval - since_checkpoint_;
  const double due = restart_checkpoint_ ? 1.0 : static_cast<double>(rule_.iterations);
  const double left = std::max(0.0, due - since_checkpoint_it_);
  return std::max<Nanos>(1, static_cast<Nanos>(std::ceil(left * static_cast<double>(period_))));
}

void JobClock::rate(double iterations_per_s) {
  if (timeline_.empty() || timeline_.back().iterations_per_s != iterations_per_s) {
    if (!timeline_.empty() && timeline_.back().time == now_) {
      timeline_.back().iterations_per_s = iterations_per_s;
    } else {
      timeline_.push_back({now_, iterations_per_s});
    }
  }
}

void JobClock::advance(Nanos time) {
  RECYCLE_ASSERT(time >= now_, "the replay clock moves forward only");
  while (now_ < time) {
    if (!stalls_.empty()) {
      Stall& s = stalls_.front();
      rate(0);
      const Nanos d = std::min(s.left, time - now_);
      lose(s.cause, to_seconds(d));
      s.left -= d;
      now_ += d;
      if (s.left == 0) {
        if (s.commits_checkpoint) {
          saved_iterations_ = s.iterations;
          saved_productive_ = s.productive;
        }
        stalls_.pop_front();
      }
      continue;
    }
    if (period_ == 0) {
      rate(0);
      lose(wait_cause_, to_seconds(time - now_));
      now_ = time;
      break;
    }
    rate(1.0 / to_seconds(period_));
    const Nanos due = until_checkpoint();
    const Nanos d = std::min(due, time - now_);
    const double done = static_cast<double>(d) / static_cast<double>(period_);
    iterations_ += done;
    partial_ += done;
    partial_ -= std::floor(partial_);
    productive_ += d;
    const double t0 = static_cast<double>(fault_free_);
    const double seconds = to_seconds(d);
    lose(LostCause::kRedundancy, seconds * (1 - t0 / static_cast<double>(reference_)));
    lose(LostCause::kDegraded,
         seconds * (t0 / static_cast<double>(reference_) - t0 / static_cast<double>(period_)));
    since_checkpoint_ += d;
    since_checkpoint_it_ += done;
    now_ += d;
    if (d == due) {
      since_checkpoint_ = 0;
      since_checkpoint_it_ = 0;
      restart_checkpoint_ = false;
      stalls_.push_front({rule_.write, LostCause::kCheckpoint, true, iterations_, productive_});
    }
  }
  // A stall that ends exactly now is served now (a zero-length one included).
  while (!stalls_.empty() && stalls_.front().left == 0) {
    if (stalls_.front().commits_checkpoint) {
      saved_iterations_ = stalls_.front().iterations;
      saved_productive_ = stalls_.front().productive;
    }
    stalls_.pop_front();
  }
}

void JobClock::stall(Nanos duration, LostCause cause) {
  RECYCLE_ASSERT(duration >= 0, "a stall lasts at least no time");
  if (duration > 0) stalls_.push_back({duration, cause});
}

void JobClock::cancel_stalls() {
  stalls_.clear();
}

void JobClock::run(Nanos period, Nanos reference) {
  RECYCLE_ASSERT(period > 0 && reference > 0, "a running job has an iteration time");
  // The baseline is the job's schedule with every worker up: a configuration timed faster (an
  // adaptive plan that outruns it, a measured row below it) runs at the fault-free rate, so no
  // time is ever gained on it.
  period_ = std::max(period, fault_free_);
  reference_ = std::max(reference, fault_free_);
}

void JobClock::wait(LostCause cause) {
  period_ = 0;
  wait_cause_ = cause;
}

void JobClock::drop_partial_iteration() {
  const double part = partial_;
  if (part <= 0) return;
  iterations_ -= part;
  lose(LostCause::kRedo, part * to_seconds(fault_free_));
  if (period_ > 0) {
    productive_ -= std::min(productive_ - saved_productive_,
                            static_cast<Nanos>(std::llround(part * static_cast<double>(period_))));
  }
  partial_ = 0;
}

void JobClock::roll_back() {
  restart_checkpoint_ = rule_.after_restart;
  if (!rule_.rollback) {
    drop_partial_iteration();
    return;
  }
  lose(LostCause::kRedo, (iterations_ - saved_iterations_) * to_seconds(fault_free_));
  iterations_ = saved_iterations_;
  productive_ = saved_productive_;
  since_checkpoint_ = 0;
  since_checkpoint_it_ = 0;
  partial_ = 0;
}

void JobClock::checkpoint_now() {
  saved_iterations_ = iterations_;
  saved_productive_ = productive_;
  since_checkpoint_ = 0;
  since_checkpoint_it_ = 0;
}

}  // namespace recycle::sim
