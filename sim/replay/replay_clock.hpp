// The bookkeeping of one policy's replay: where the job's progress stands, what its last
// checkpoint holds, and where every second of the replay went (docs/policies.md, "Accounting").
//
// Progress is counted in iterations of the global batch (every policy keeps the batch, so an
// iteration is the same samples under all of them). At every instant the job is either stalled
// for a cause (detection, restart, a checkpoint write, ...), waiting for an outside event (a
// repair), or running at the iteration time of its configuration. Time lost is measured against
// the fault-free job: a stall loses its whole length; running at iteration time T instead of the
// fault-free T0 loses (1 - T0/T) of it (to `redundancy` for the part a policy pays even without
// failures, to `degraded` for the rest); work thrown away (an interrupted iteration, the progress
// since the last checkpoint) loses what it took the fault-free job to do it. So at any time
//     elapsed = iterations x T0 + sum of lost seconds,
// which the tests check.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string_view>
#include <vector>

#include "core/units.hpp"

namespace recycle::sim {

enum class LostCause : std::uint8_t {
  kDetection,        ///< between a failure and its detection
  kRedo,             ///< work thrown away and done again (interrupted iteration, rollback)
  kRestart,          ///< restarting the job and loading a checkpoint after a failure
  kRepairWait,       ///< no configuration can run: waiting for a repair or a spare
  kDegraded,         ///< running slower than fault-free because of failures
  kReconfiguration,  ///< changing configuration without a failure's restart (rejoin, re-grow)
  kRedundancy,       ///< what the policy costs with every worker up (Bamboo's redundant forwards)
  kCheckpoint,       ///< writing checkpoints
};
inline constexpr std::size_t kLostCauses = 8;

/// "detection", "redo", "restart", "repair_wait", "degraded", "reconfiguration", "redundancy",
/// "checkpoint".
[[nodiscard]] std::string_view to_string(LostCause cause) noexcept;

/// One step of the throughput timeline: from `time` on, the job trains `iterations_per_s`.
struct RatePoint {
  Nanos time = 0;
  double iterations_per_s = 0;
};

/// When the job checkpoints and what a rollback throws away (the job file's checkpoint block).
struct CheckpointRule {
  Nanos interval = 0;           ///< running time between checkpoints, unless `iterations` says
  std::int64_t iterations = 0;  ///< > 0: iterations between checkpoints (Varuna counts steps)
  Nanos write = 0;              ///< the job stops while one is written
  /// One more right after the first iteration that follows a rollback (Varuna's simulator).
  bool after_restart = false;
  /// false: a rollback keeps the trained work (the survivors hold the state, as Bamboo's
  /// simulator has it) and throws away only the iteration in progress.
  bool rollback = true;
};

class JobClock {
 public:
  /// `fault_free`: the job's iteration time with every worker up (T0); checkpoints as `rule` says.
  JobClock(Nanos fault_free, const CheckpointRule& rule);

  /// Moves to `time` (>= now): queued stalls first, then running or waiting.
  void advance(Nanos time);
  [[nodiscard]] Nanos now() const noexcept { return now_; }

  /// Queues a stall of `duration` after the ones already queued.
  void stall(Nanos duration, LostCause cause);
  /// Drops the stalls not yet served (a restart a new failure interrupts).
  void cancel_stalls();
  /// After the queued stalls, run at `period`; `reference` is the policy's own iteration time
  /// with every worker up (T0 for all but Bamboo): lost time below it is `degraded`, above T0
  /// `redundancy`. Both are charged at least T0: nothing runs faster than the baseline, so no
  /// lost time is negative and goodput is at most 1.
  void run(Nanos period, Nanos reference);
  /// After the queued stalls, stop until run() is called; the time goes to `cause`.
  void wait(LostCause cause);
  [[nodiscard]] bool running() const noexcept { return period_ > 0; }
  /// Whether stalls are queued (a detection, restart or reconfiguration not yet over).
  [[nodiscard]] bool stalled() const noexcept { return !stalls_.empty(); }

  /// Throws away the iteration in progress.
  void drop_partial_iteration();
  /// Throws away everything since the last checkpoint.
  void roll_back();
  /// What roll_back() would throw away now, in fault-free seconds.
  [[nodiscard]] double rework_s() const noexcept {
    return (rule_.rollback ? iterations_ - saved_iterations_ : partial_) * to_seconds(fault_free_);
  }
  /// Takes a checkpoint now at no cost (a policy that wrote one as part of a stall).
  void checkpoint_now();

  [[nodiscard]] double iterations() const noexcept { return iterations_; }
  /// Running time whose work was kept.
  [[nodiscard]] Nanos productive() const noexcept { return productive_; }
  [[nodiscard]] const std::array<double, kLostCauses>& lost_s() const noexcept { return lost_; }
  [[nodiscard]] const std::vector<RatePoint>& timeline() const noexcept { return timeline_; }

 private:
  struct Stall {
    Nanos left = 0;
    LostCause cause = LostCause::kDetection;
    bool commits_checkpoint = false;  ///< a checkpoint write: its state is saved when it ends
    double iterations = 0;
    Nanos productive = 0;
  };
  void lose(LostCause cause, double seconds) { lost_[static_cast<std::size_t>(cause)] += seconds; }
  void rate(double iterations_per_s);
  /// Running time at the current period until the next checkpoint is due.
  [[nodiscard]] Nanos until_checkpoint() const;

  Nanos now_ = 0;
  Nanos fault_free_;
  CheckpointRule rule_;
  bool restart_checkpoint_ = false;  ///< the one after a rollback is still due
  std::deque<Stall> stalls_;
  Nanos period_ = 0;     ///< when running; 0 while waiting
  Nanos reference_ = 0;  ///< the policy's fault-free period
  LostCause wait_cause_ = LostCause::kRepairWait;
  Nanos since_checkpoint_ = 0;      ///< running time since the last checkpoint
  double since_checkpoint_it_ = 0;  ///< iterations since the last checkpoint
  double iterations_ = 0;
  double partial_ = 0;  ///< of the iteration in progress, in iterations
  Nanos productive_ = 0;
  double saved_iterations_ = 0;
  Nanos saved_productive_ = 0;
  std::array<double, kLostCauses> lost_{};
  std::vector<RatePoint> timeline_;
};

}  // namespace recycle::sim
