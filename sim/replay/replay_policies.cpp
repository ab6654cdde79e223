#include "sim/replay/replay_policies.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "core/error.hpp"
#include "core/parse.hpp"
#include "planner/language/failures.hpp"

namespace recycle::sim {

LiveNodes PolicyContext::live() const {
  return {slots.live_nodes(), slots.live_nodes() + slots.spares()};
}

Nanos PolicyContext::restart() const {
  if (costs.restart_by_nodes.empty()) return costs.restart;
  auto it = costs.restart_by_nodes.upper_bound(slots.live_nodes());
  if (it != costs.restart_by_nodes.begin()) --it;
  return it->second;
}

namespace {

using planner::WorkerId;

/// The longest state copy among the workers of `slots` (a rejoining node copies its stage's
/// parameters, gradients and optimizer state from a live peer).
Nanos copy_time(PolicyContext& ctx, const std::vector<std::int64_t>& slots) {
  Nanos longest = 0;
  for (const std::int64_t slot : slots) {
    for (const WorkerId& w : ctx.slots.workers_of(slot)) {
      longest = std::max(longest, ctx.rates.state_copy(w.stage));
    }
  }
  return longest;
}

/// Whether every optimizer shard is still on a live rank now that the nodes of `lost` slots
/// failed (ReplayRates::shards_survive); call it before the slots are filled again.
bool shards_survive(PolicyContext& ctx, const std::vector<std::int64_t>& lost) {
  std::vector<WorkerId> burst;
  for (const std::int64_t slot : lost) {
    for (const WorkerId& w : ctx.slots.workers_of(slot)) burst.push_back(w);
  }
  std::vector<WorkerId> down;
  for (const WorkerId& w : ctx.slots.failed_workers()) {
    if (std::find(burst.begin(), burst.end(), w) == burst.end()) down.push_back(w);
  }
  return ctx.rates.shards_survive(down, burst);
}

/// Making the replicas of the shards of `lost` slots' workers again, on a stage's next live rank
/// (none where a single rank is left: it holds both copies' work itself).
Nanos shard_copy_time(PolicyContext& ctx, const std::vector<std::int64_t>& lost) {
  const std::vector<WorkerId> failed = ctx.slots.failed_workers();
  Nanos longest = 0;
  for (const std::int64_t slot : lost) {
    for (const WorkerId& w : ctx.slots.workers_of(slot)) {
      const auto down = std::count_if(failed.begin(), failed.end(),
                                      [&](const WorkerId& f) { return f.stage == w.stage; });
      if (ctx.rates.layout().dp - down >= 2) {
        longest = std::max(longest, ctx.rates.shard_copy(w.stage));
      }
    }
  }
  return longest;
}

/// The hole whose return gives ReCycle the fastest iteration charged (a stage with every replica
/// down first of all: the job cannot run without it); among equals, the lowest slot. A hole's
/// period is the plan's where the replay has made it, else the plan without its order search
/// (ReplayRates::recycle_estimate). Holes are tried in slot order, skipping one whose lower bound
/// (planner::recycle_period_bound, which needs no plan) cannot beat the best so far, and stopping
/// at the first that gives the fault-free time.
JobSlots::SlotChoice recycle_choice(PolicyContext& ctx) {
  return [&ctx](const std::vector<std::int64_t>& empty) {
    const Nanos t0 = ctx.rates.fault_free();
    std::int64_t chosen = empty.front();
    std::optional<Nanos> best;
    for (const std::int64_t slot : empty) {
      const std::vector<WorkerId> failed = ctx.slots.failed_workers_but(slot);
      const auto bound = ctx.rates.recycle_bound(failed);
      if (!bound || (best && std::max(*bound, t0) >= *best)) continue;
      const Nanos charged = std::max(
          *ctx.rates.recycle_estimate(failed, {ctx.live().job + 1, ctx.live().cluster}), t0);
      if (!best || charged < *best) {
        best = charged;
        chosen = slot;
      }
      if (*best == t0) break;  // nothing runs faster than the baseline
    }
    return chosen;
  };
}

/// ReCycle, Oobleck and Bamboo: the job goes on in place after a failure, from the live workers'
/// state, as long as its configuration can run; otherwise it falls back to a restart from the
/// last checkpoint once a repair or a spare makes one possible.
class InPlacePolicy : public Policy {
 public:
  void start(PolicyContext& ctx) final {
    ctx.slots.fill_from_spares(choice(ctx));
    if (const auto p = period(ctx)) {
      fallback_ = false;
      ctx.clock.run(*p, reference(ctx));
    } else {
      fallback_ = true;
      ctx.clock.wait(LostCause::kRepairWait);
    }
  }

  void slots_lost(PolicyContext& ctx, const std::vector<std::int64_t>& lost) final {
    count_failures(ctx, static_cast<std::int64_t>(lost.size()));
    if (fallback_ || ctx.clock.now() < restart_until_) {
      fallback_ = true;
      ctx.clock.cancel_stalls();
      resume_from_checkpoint(ctx);
      return;
    }
    ctx.clock.stall(ctx.costs.detection, LostCause::kDetection);
    if (drops_interrupted_iteration()) ctx.clock.drop_partial_iteration();
    const bool state_lives = shards_survive(ctx, lost);
    const std::vector<std::int64_t> filled = ctx.slots.fill_from_spares(choice(ctx));
    if (const auto p = state_lives ? period(ctx) : std::nullopt) {
      const Nanos moved =
          std::max({copy_time(ctx, filled), failure_copy(ctx, lost), shard_copy_time(ctx, lost)});
      ctx.clock.stall(fixed_cost(ctx) + moved, LostCause::kReconfiguration);
      ctx.clock.run(*p, reference(ctx));
      return;
    }
    // No in-place configuration, or an optimizer shard lost with its rank: back to the last
    // checkpoint, restarting at once if the live nodes can run from it, else waiting for a repair
    // or a spare.
    fallback_ = true;
    ++ctx.fallbacks;
    ctx.clock.roll_back();
    resume_from_checkpoint(ctx);
  }

  void node_joined(PolicyContext& ctx) final {
    const std::vector<std::int64_t> filled = ctx.slots.fill_from_spares(choice(ctx));
    if (filled.empty()) return;
    if (fallback_) {
      resume_from_checkpoint(ctx);
      return;
    }
    ctx.clock.stall(fixed_cost(ctx) + copy_time(ctx, filled), LostCause::kReconfiguration);
    if (const auto p = period(ctx)) ctx.clock.run(*p, reference(ctx));
  }

 protected:
  /// The iteration time of the current configuration; nullopt when it cannot run in place.
  virtual std::optional<Nanos> period(PolicyContext& ctx) = 0;
  /// Which empty slot a spare or repaired node fills first (empty: the lowest).
  virtual JobSlots::SlotChoice choice(PolicyContext&) { return {}; }
  /// The policy's own iteration time with every worker up.
  virtual Nanos reference(PolicyContext& ctx) { return ctx.rates.fault_free(); }
  /// The fixed cost of changing configuration in place (a failure or a rejoin).
  virtual Nanos fixed_cost(PolicyContext&) { return 0; }
  /// State the survivors must move after `lost` failed.
  virtual Nanos failure_copy(PolicyContext&, const std::vector<std::int64_t>&) { return 0; }
  virtual bool drops_interrupted_iteration() const { return true; }
  /// Called first on every failure of `count` slots' nodes at one instant.
  virtual void count_failures(PolicyContext&, std::int64_t) {}
  /// Whether the job restarts from its checkpoint (it has no state in memory).
  [[nodiscard]] bool restarting() const noexcept { return fallback_; }

 private:
  /// In fallback: restart from the checkpoint if the configuration can run, else wait.
  void resume_from_checkpoint(PolicyContext& ctx) {
    if (const auto p = period(ctx)) {
      ctx.clock.stall(ctx.restart(), LostCause::kRestart);
      ctx.clock.run(*p, reference(ctx));
      restart_until_ = ctx.clock.now() + ctx.costs.detection + ctx.restart();
      fallback_ = false;
    } else {
      ctx.clock.wait(LostCause::kRepairWait);
    }
  }

  bool fallback_ = false;
  Nanos restart_until_ = -1;  ///< a failure before this interrupts the restart
};

class RecyclePolicy final : public InPlacePolicy {
 protected:
  std::optional<Nanos> period(PolicyContext& ctx) override {
    return ctx.rates.recycle(ctx.slots.failed_workers(), ctx.live());
  }
  JobSlots::SlotChoice choice(PolicyContext& ctx) override { return recycle_choice(ctx); }
};

/// Oobleck's state in memory: every reconfiguration re-instantiates pipelines that each hold every
/// layer, so the state is lost only when the failures since the last one completed could have hit
/// every pipeline (as many failures as pipelines). One definition for the oobleck policy and for
/// adaptive's re-instantiated pipelines.
class OobleckState {
 public:
  /// `count` slots' nodes failed now; the reconfiguration that follows completes after detection
  /// and Oobleck's re-instantiation.
  void failed(PolicyContext& ctx, std::int64_t count) {
    const Nanos now = ctx.clock.now();
    unrecovered_ = now < recovered_at_ ? unrecovered_ + count : count;
    recovered_at_ = now + ctx.costs.detection + ctx.costs.oobleck_reconfigure;
  }
  /// Whether the failures since the last reconfiguration could have hit every pipeline.
  [[nodiscard]] bool lost(PolicyContext& ctx) const {
    const std::int64_t pp = ctx.rates.layout().pp;
    const std::int64_t pipelines = (ctx.slots.live_workers() + unrecovered_ + pp - 1) / pp;
    return unrecovered_ > 0 && unrecovered_ >= pipelines;
  }
  /// A restart from the checkpoint: nothing in memory to lose.
  void reset() { unrecovered_ = 0; }

 private:
  std::int64_t unrecovered_ = 0;  ///< failures since the last reconfiguration completed
  Nanos recovered_at_ = -1;
};

class OobleckPolicy final : public InPlacePolicy {
 protected:
  std::optional<Nanos> period(PolicyContext& ctx) override {
    // Restarting from the checkpoint, there is no state in memory to lose.
    if (restarting()) state_.reset();
    if (state_.lost(ctx)) {
      state_.reset();  // the restart from the checkpoint starts afresh
      return std::nullopt;
    }
    return ctx.rates.oobleck(ctx.slots.live_workers(), ctx.live());
  }
  Nanos fixed_cost(PolicyContext& ctx) override { return ctx.costs.oobleck_reconfigure; }
  Nanos failure_copy(PolicyContext& ctx, const std::vector<std::int64_t>& lost) override {
    return copy_time(ctx, lost);  // the lost layers, copied from other pipelines
  }
  void count_failures(PolicyContext& ctx, std::int64_t count) override {
    state_.failed(ctx, count);
  }

 private:
  OobleckState state_;
};

/// Bamboo: a failed stage's work is taken over by its predecessor, which holds its replica (no
/// redo, no stall past detection); then, as Bamboo's reconfiguration rules say, the job
/// re-forms whole pipelines from the live nodes (its reconfiguration cost) when the pool can
/// relieve every covering node, when covering nodes are more than 2.5 % of the live ones, or when
/// the live nodes make one more pipeline. Where no take-over can run — two failed consecutive
/// stages of a pipeline (the replica is lost with its holder) or a worker that cannot hold both
/// stages — the failed stages' state still lives on their data-parallel peers, so the job re-forms
/// whole pipelines from it at once, redoing only the iteration in progress (Bamboo's simulator: a
/// fatal failure is a rendezvous, not a rollback). Only when a stage is down on every pipeline,
/// or the live nodes form no pipeline that can run, is the state gone: back to the checkpoint,
/// and a restart on the pipelines the live nodes form.
class BambooPolicy final : public Policy {
 public:
  void start(PolicyContext& ctx) override {
    ctx.slots.regroup();
    restart(ctx, 0);
  }
  void slots_lost(PolicyContext& ctx, const std::vector<std::int64_t>& lost) override {
    if (!ctx.clock.running() || ctx.clock.now() < restart_until_) {
      ctx.clock.cancel_stalls();
      ctx.slots.regroup();
      restart(ctx, ctx.restart());
      return;
    }
    ctx.clock.stall(ctx.costs.detection, LostCause::kDetection);
    if (!shards_survive(ctx, lost)) {  // an optimizer shard is gone with its rank
      fall_back(ctx);
      return;
    }
    if (const auto p = period(ctx)) {
      ctx.clock.run(*p, *ctx.rates.bamboo_fault_free());
      maybe_reconfigure(ctx);
      return;
    }
    if (ctx.slots.every_stage_live()) {
      // No take-over, but every stage's state is on a live peer: re-form from it.
      ctx.clock.drop_partial_iteration();
      reform(ctx);
      return;
    }
    fall_back(ctx);
  }
  void node_joined(PolicyContext& ctx) override {
    if (!ctx.clock.running()) {
      ctx.slots.regroup();
      restart(ctx, ctx.restart());
      return;
    }
    if (ctx.clock.now() >= restart_until_) maybe_reconfigure(ctx);
  }

 private:
  /// nullopt when a replica is lost (two consecutive failed stages) or a take-over does not fit.
  static std::optional<Nanos> period(PolicyContext& ctx) {
    if (ctx.slots.active_pipelines() == 0) return std::nullopt;  // fewer nodes than a pipeline
    const std::vector<WorkerId> failed = ctx.slots.failed_workers();
    const std::int32_t pp = ctx.rates.layout().pp;
    for (const WorkerId& w : failed) {
      const WorkerId next{w.dp, (w.stage + 1) % pp};
      if (std::binary_search(failed.begin(), failed.end(), next)) return std::nullopt;
    }
    return ctx.rates.bamboo(failed, ctx.live(), ctx.slots.active_pipelines());
  }
  void maybe_reconfigure(PolicyContext& ctx) {
    const std::int64_t covering = static_cast<std::int64_t>(ctx.slots.failed_workers().size());
    const std::int64_t live = ctx.slots.live_nodes();
    const bool relieve = covering > 0 && ctx.slots.spares() >= covering;
    const bool overloaded = 2 * covering * 20 > live;  // 2 x covering / live > 0.05
    if (!relieve && !overloaded && ctx.slots.pipelines_possible() <= ctx.slots.active_pipelines()) {
      return;
    }
    reform(ctx);
  }
  /// Re-forms whole pipelines from the live nodes (Bamboo's reconfiguration cost).
  void reform(PolicyContext& ctx) {
    ctx.slots.regroup();
    if (const auto p = period(ctx)) {
      ctx.clock.stall(ctx.costs.bamboo_reconfigure, LostCause::kReconfiguration);
      ctx.clock.run(*p, *ctx.rates.bamboo_fault_free());
      return;
    }
    // The live nodes form no pipeline, or the re-formed ones do not fit memory: the job stops,
    // and what it trained since its checkpoint is gone with it (no pipeline holds it any more).
    fall_back(ctx);
  }
  /// Fatal: back to the last checkpoint and restart on the pipelines the live nodes form, or wait
  /// for a repair when they form none.
  void fall_back(PolicyContext& ctx) {
    ++ctx.fallbacks;
    ctx.clock.roll_back();
    ctx.slots.regroup();
    restart(ctx, ctx.restart());
  }
  void restart(PolicyContext& ctx, Nanos cost) {
    const auto p = ctx.slots.complete_pipelines() > 0 ? period(ctx) : std::nullopt;
    if (!p) {
      ctx.clock.wait(LostCause::kRepairWait);
      return;
    }
    ctx.clock.stall(cost, LostCause::kRestart);
    ctx.clock.run(*p, *ctx.rates.bamboo_fault_free());
    restart_until_ = ctx.clock.now() + cost;
  }

  Nanos restart_until_ = -1;  ///< a failure before this interrupts the restart
};

/// Checkpoint-restart and elastic training: every failure rolls the job back to its last
/// checkpoint and restarts it on the pipelines it can run. Checkpoint-restart runs all of them or
/// none: it waits until every slot is filled again, by a spare or by the repaired node. Elastic
/// restarts with as many whole pipelines as the live nodes and spares form (JobSlots::regroup),
/// which take over the whole global batch; when the nodes for one more are up, the job
/// checkpoints and restarts with it.
class RestartPolicy final : public Policy {
 public:
  explicit RestartPolicy(bool shrink) : shrink_(shrink) {}

  void start(PolicyContext& ctx) override {
    regroup(ctx);
    pipelines_ = runnable(ctx);
    const auto p = pipelines_ > 0 ? ctx.rates.pipelines(pipelines_) : std::nullopt;
    if (p) {
      ctx.clock.run(*p, ctx.rates.fault_free());
    } else {
      pipelines_ = 0;
      ctx.clock.wait(LostCause::kRepairWait);
    }
  }
  void slots_lost(PolicyContext& ctx, const std::vector<std::int64_t>&) override {
    // A failure of the running job rolls it back; one that interrupts the restart after an
    // earlier failure (or comes while the job waits) only starts that restart again.
    const Nanos now = ctx.clock.now();
    if (ctx.clock.running() && now >= restart_until_) ++ctx.fallbacks;
    ctx.clock.cancel_stalls();
    ctx.clock.stall(ctx.costs.detection, LostCause::kDetection);
    ctx.clock.roll_back();
    regroup(ctx);
    restart(ctx, LostCause::kRestart, ctx.restart());
    restart_until_ = now + ctx.costs.detection + ctx.restart();
  }
  void node_joined(PolicyContext& ctx) override {
    regroup(ctx);
    if (runnable(ctx) <= pipelines_) return;
    if (ctx.clock.running() && !ctx.clock.stalled()) {
      // Re-grow: checkpoint (nothing is lost) and restart with the pipeline back.
      ctx.clock.checkpoint_now();
      restart(ctx, LostCause::kReconfiguration, ctx.costs.write + ctx.restart());
    } else {
      const Nanos now = ctx.clock.now();
      if (!ctx.clock.running() || now < restart_until_) restart_until_ = now + ctx.restart();
      ctx.clock.cancel_stalls();
      restart(ctx, LostCause::kRestart, ctx.restart());
    }
  }

 private:
  /// Elastic re-forms whole pipelines from the live nodes; checkpoint-restart refills slots.
  void regroup(PolicyContext& ctx) const {
    if (shrink_) {
      ctx.slots.regroup();
    } else {
      ctx.slots.fill_from_spares();
    }
  }
  [[nodiscard]] std::int32_t runnable(PolicyContext& ctx) const {
    if (shrink_) return ctx.slots.complete_pipelines();
    return ctx.slots.full() ? ctx.rates.layout().dp : 0;
  }
  void restart(PolicyContext& ctx, LostCause cause, Nanos cost) {
    pipelines_ = runnable(ctx);
    // A step table may say these pipelines do not fit: wait for more nodes.
    const auto p = pipelines_ > 0 ? ctx.rates.pipelines(pipelines_) : std::nullopt;
    if (!p) {
      pipelines_ = 0;
      ctx.clock.wait(LostCause::kRepairWait);
      return;
    }
    ctx.clock.stall(cost, cause);
    ctx.clock.run(*p, ctx.rates.fault_free());
  }

  bool shrink_;
  std::int32_t pipelines_ = 0;
  Nanos restart_until_ = -1;  ///< a failure before this interrupts a restart after a failure
};

/// Adaptive recovery (after Odyssey, arXiv 2508.21613, which chooses the recovery per failure):
/// at every failure and rejoin it takes the action whose expected loss until the next event is
/// smallest, under the rates and costs the fixed policies use. An action's loss is what switching
/// to it costs (its stalls, and the work since the checkpoint for the actions that roll back) plus
/// `horizon` x (1 - T0 / T) for the iteration time T it runs at:
///  - reroute:       ReCycle's plan for the failure set; a copy of the state to filled slots, and a
///                   reconfiguration when it leaves re-instantiated pipelines, a re-grow (write and
///                   restart, as elastic's) when it leaves dropped ones;
///  - reinstantiate: Oobleck's templates over the live workers; its re-instantiation and copies;
///  - drop:          the whole pipelines alone (elastic's): back to the checkpoint and a restart,
///                   or a re-grow when it is already running dropped pipelines;
///  - restart:       with every slot filled again, back to the checkpoint and a restart
///                   (checkpoint-restart's).
/// A spare that takes a hole at a failure counts as `spare` (each action then runs on the filled
/// slots). Ties go to the action listed first. With no action possible (a stage down on every
/// pipeline), back to the checkpoint and wait for a repair, as the in-place policies do.
class AdaptivePolicy final : public Policy {
 public:
  void start(PolicyContext& ctx) override {
    ctx.slots.fill_from_spares(recycle_choice(ctx));
    waiting_ = false;
    mode_ = Mode::kWhole;
    if (ctx.slots.full()) {
      ctx.clock.run(ctx.rates.fault_free(), ctx.rates.fault_free());
      return;
    }
    decide(ctx, {}, {}, Nanos{0});  // nodes down from the start: nothing to switch from
  }
  void slots_lost(PolicyContext& ctx, const std::vector<std::int64_t>& lost) override {
    if (waiting_ || ctx.clock.now() < restart_until_) {
      // Lost while waiting or restarting from the checkpoint: nothing trained since to keep.
      ctx.clock.cancel_stalls();
      ctx.slots.fill_from_spares(recycle_choice(ctx));
      decide(ctx, {}, {}, ctx.restart());
      return;
    }
    oobleck_.failed(ctx, static_cast<std::int64_t>(lost.size()));
    ctx.clock.stall(ctx.costs.detection, LostCause::kDetection);
    ctx.clock.drop_partial_iteration();
    const bool shards_live = shards_survive(ctx, lost);
    const std::vector<std::int64_t> filled = ctx.slots.fill_from_spares(recycle_choice(ctx));
    count_[kSpare] += static_cast<std::int64_t>(filled.size());
    if (!shards_live) {
      // An optimizer shard is gone with its rank: every action starts from the checkpoint, as
      // the in-place policies restart from it.
      ++ctx.fallbacks;
      ctx.clock.roll_back();
      decide(ctx, {}, lost, ctx.restart());
      return;
    }
    decide(ctx, filled, lost, std::nullopt);
  }
  void node_joined(PolicyContext& ctx) override {
    const std::vector<std::int64_t> filled = ctx.slots.fill_from_spares(recycle_choice(ctx));
    if (filled.empty()) return;
    if (waiting_) {
      decide(ctx, {}, {}, ctx.restart());
      return;
    }
    decide(ctx, filled, {}, std::nullopt);
  }
  [[nodiscard]] std::vector<std::pair<std::string, std::int64_t>> actions() const override {
    return {{"reroute", count_[kReroute]},
            {"reinstantiate", count_[kReinstantiate]},
            {"drop", count_[kDrop]},
            {"restart", count_[kRestart]},
            {"spare", count_[kSpare]}};
  }

 private:
  /// kResume: back to the job's own configuration once every hole is filled (not an action of its
  /// own: it follows a repair).
  enum Action : std::uint8_t {
    kReroute,
    kReinstantiate,
    kDrop,
    kRestart,
    kSpare,
    kResume,
    kActions
  };
  /// What the job runs now: its own configuration whole, or what an action made of it.
  enum class Mode : std::uint8_t { kWhole, kRerouted, kReinstantiated, kDropped };
  struct Option {
    Action action = kReroute;
    Nanos period = 0;
    Nanos stall = 0;          ///< switching stalls
    bool rolls_back = false;  ///< throws away the work since the checkpoint
    bool regrows = false;     ///< writes a checkpoint first (nothing lost), as elastic re-grows
  };

  /// Chooses and takes an action; `filled` slots got a node, `lost` failed (empty at a rejoin).
  /// `from_checkpoint`: the job is not running (it waits, or restarts after a rollback), so every
  /// action starts from the checkpoint's state at that one cost.
  void decide(PolicyContext& ctx, const std::vector<std::int64_t>& filled,
              const std::vector<std::int64_t>& lost, std::optional<Nanos> from_checkpoint) {
    const Nanos t0 = ctx.rates.fault_free();
    const Nanos regrow = ctx.costs.write + ctx.restart();
    const bool dropped = mode_ == Mode::kDropped;
    const Nanos copied =
        std::max({copy_time(ctx, filled), copy_time(ctx, lost), shard_copy_time(ctx, lost)});
    const std::vector<WorkerId> failed = ctx.slots.failed_workers();
    // A checkpoint holds every stage. In memory, the job's own layout keeps a stage's state while
    // a replica of it lives; re-instantiated pipelines each hold every layer (OobleckState).
    if (from_checkpoint) oobleck_.reset();
    const bool state_lives =
        from_checkpoint ||
        (mode_ == Mode::kReinstantiated ? !oobleck_.lost(ctx) : ctx.slots.every_stage_live());
    std::vector<Option> options;
    // Leaving dropped pipelines is a re-grow: every worker restarts from the checkpoint just
    // written, which holds what they would otherwise copy or re-instantiate.
    const Nanos in_place = dropped                          ? regrow
                           : mode_ == Mode::kReinstantiated ? ctx.costs.oobleck_reconfigure + copied
                                                            : copied;
    if (failed.empty()) {
      // Every hole filled: the job's own configuration, in place or from the checkpoint.
      options.push_back({from_checkpoint ? kRestart : kResume, t0, in_place, false, dropped});
      if (!from_checkpoint) options.push_back({kRestart, t0, ctx.restart(), true, false});
    } else if (state_lives) {
      if (const auto p = ctx.rates.recycle(failed, ctx.live())) {
        options.push_back({kReroute, *p, in_place, false, dropped});
      }
    }
    if (state_lives && !failed.empty()) {
      if (const auto p = ctx.rates.oobleck(ctx.slots.live_workers(), ctx.live())) {
        options.push_back({kReinstantiate, *p,
                           dropped ? regrow : ctx.costs.oobleck_reconfigure + copied, false,
                           dropped});
      }
    }
    if (const std::int32_t whole = ctx.slots.complete_pipelines(); whole > 0 && !failed.empty()) {
      if (const auto p = ctx.rates.pipelines(whole)) {
        options.push_back({kDrop, *p, dropped ? regrow : ctx.restart(), !dropped, dropped});
      }
    }
    if (from_checkpoint) {
      for (Option& o : options) o = {o.action, o.period, *from_checkpoint, false, false};
    }
    const Option* best = nullptr;
    double best_loss = 0;
    for (const Option& o : options) {
      const double slower = 1 - to_seconds(t0) / to_seconds(std::max(o.period, t0));
      const double loss = to_seconds(o.stall) + (o.rolls_back ? ctx.clock.rework_s() : 0) +
                          to_seconds(ctx.costs.horizon) * slower;
      if (!best || loss < best_loss) {
        best = &o;
        best_loss = loss;
      }
    }
    if (best == nullptr) {
      if (!from_checkpoint) {
        // A stage's state is gone, or nothing runs in place: back to the checkpoint, and from it
        // whatever the live nodes can run (or wait).
        ++ctx.fallbacks;
        ctx.clock.roll_back();
        decide(ctx, {}, lost, ctx.restart());
        return;
      }
      ctx.clock.wait(LostCause::kRepairWait);
      waiting_ = true;
      return;
    }
    const Option chosen = *best;
    if (chosen.rolls_back) {
      ++ctx.fallbacks;
      ctx.clock.roll_back();
    }
    if (chosen.regrows) ctx.clock.checkpoint_now();
    const bool restarts = from_checkpoint || chosen.rolls_back || chosen.regrows;
    // A restart after a failure is `restart`; a re-grow, as elastic's, and a change in place are
    // `reconfiguration`.
    ctx.clock.stall(chosen.stall, from_checkpoint || chosen.rolls_back
                                      ? LostCause::kRestart
                                      : LostCause::kReconfiguration);
    ctx.clock.run(chosen.period, t0);
    if (restarts) {
      restart_until_ =
          ctx.clock.now() + (lost.empty() ? Nanos{0} : ctx.costs.detection) + chosen.stall;
    }
    ++count_[chosen.action];
    mode_ = failed.empty()                    ? Mode::kWhole
            : chosen.action == kReroute       ? Mode::kRerouted
            : chosen.action == kReinstantiate ? Mode::kReinstantiated
                                              : Mode::kDropped;
    waiting_ = false;
  }

  Mode mode_ = Mode::kWhole;
  OobleckState oobleck_;
  bool waiting_ = false;
  Nanos restart_until_ = -1;  ///< a failure before this interrupts a restart
  std::array<std::int64_t, kActions> count_{};
};

/// A floor on the nodes a job runs with (cluster.min_nodes; Varuna's simulator stops below 12):
/// below it the job stops, losing what it trained since its checkpoint, and waits; once enough
/// nodes are back it restarts (job_restart_s + load_s) and the policy takes over as at the start.
class MinNodesGate final : public Policy {
 public:
  MinNodesGate(std::unique_ptr<Policy> inner, std::int64_t min_nodes)
      : inner_(std::move(inner)), min_nodes_(min_nodes) {}
  void start(PolicyContext& ctx) override {
    if (enough(ctx)) {
      inner_->start(ctx);
    } else {
      stopped_ = true;
      ctx.clock.wait(LostCause::kRepairWait);
    }
  }
  void slots_lost(PolicyContext& ctx, const std::vector<std::int64_t>& lost) override {
    if (stopped_) return;
    if (enough(ctx)) {
      inner_->slots_lost(ctx, lost);
      return;
    }
    stopped_ = true;
    ctx.clock.cancel_stalls();
    ctx.clock.stall(ctx.costs.detection, LostCause::kDetection);
    ++ctx.fallbacks;
    ctx.clock.roll_back();
    ctx.clock.wait(LostCause::kRepairWait);
  }
  void node_joined(PolicyContext& ctx) override {
    if (!stopped_) {
      inner_->node_joined(ctx);
      return;
    }
    if (!enough(ctx)) return;
    stopped_ = false;
    ctx.clock.stall(ctx.restart(), LostCause::kRestart);
    inner_->start(ctx);
  }
  [[nodiscard]] std::vector<std::pair<std::string, std::int64_t>> actions() const override {
    return inner_->actions();
  }

 private:
  [[nodiscard]] bool enough(const PolicyContext& ctx) const {
    return ctx.slots.live_nodes() + ctx.slots.spares() >= min_nodes_;
  }

  std::unique_ptr<Policy> inner_;
  std::int64_t min_nodes_;
  bool stopped_ = false;
};

}  // namespace

const std::vector<PolicyKind>& all_policies() {
  static const std::vector<PolicyKind> kAll = {PolicyKind::kRecycle, PolicyKind::kCheckpoint,
                                               PolicyKind::kElastic, PolicyKind::kOobleck,
                                               PolicyKind::kBamboo,  PolicyKind::kAdaptive};
  return kAll;
}

std::string_view to_string(PolicyKind kind) noexcept {
  switch (kind) {
    case PolicyKind::kRecycle:
      return "recycle";
    case PolicyKind::kCheckpoint:
      return "checkpoint";
    case PolicyKind::kElastic:
      return "elastic";
    case PolicyKind::kOobleck:
      return "oobleck";
    case PolicyKind::kBamboo:
      return "bamboo";
    case PolicyKind::kAdaptive:
      return "adaptive";
  }
  return "?";
}

PolicyKind parse_policy(std::string_view name, const std::string& where) {
  for (const PolicyKind kind : all_policies()) {
    if (to_string(kind) == name) return kind;
  }
  throw InputError(
      where, "unknown policy '" + shown(std::string(name)) +
                 "', expected recycle, checkpoint, elastic, oobleck, bamboo, adaptive or all");
}

std::vector<PolicyKind> parse_policies(std::string_view text, const std::string& where) {
  if (text == "all") return all_policies();
  std::vector<PolicyKind> out;
  for (const std::string_view name : split(text, ',')) {
    if (trim(name) == "all")
      throw InputError(where, "'all' stands alone: it already lists every policy");
    const PolicyKind kind = parse_policy(trim(name), where);
    if (std::find(out.begin(), out.end(), kind) != out.end()) {
      throw InputError(where, "'" + std::string(trim(name)) + "' is listed twice");
    }
    out.push_back(kind);
  }
  return out;
}

std::unique_ptr<Policy> make_policy(PolicyKind kind, std::int64_t min_nodes) {
  if (min_nodes > 0) return std::make_unique<MinNodesGate>(make_policy(kind), min_nodes);
  switch (kind) {
    case PolicyKind::kRecycle:
      return std::make_unique<RecyclePolicy>();
    case PolicyKind::kCheckpoint:
      return std::make_unique<RestartPolicy>(false);
    case PolicyKind::kElastic:
      return std::make_unique<RestartPolicy>(true);
    case PolicyKind::kOobleck:
      return std::make_unique<OobleckPolicy>();
    case PolicyKind::kBamboo:
      return std::make_unique<BambooPolicy>();
    case PolicyKind::kAdaptive:
      return std::make_unique<AdaptivePolicy>();
  }
  RECYCLE_ASSERT(false, "every policy kind is made");
  return nullptr;
}

}  // namespace recycle::sim
