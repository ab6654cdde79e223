#include "sim/replay/replay_policies.hpp"

#include <algorithm>
#include <optional>

#include "core/error.hpp"
#include "core/parse.hpp"
#include "planner/language/failures.hpp"

namespace recycle::sim {

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

/// ReCycle, Oobleck and Bamboo: the job goes on in place after a failure, from the live workers'
/// state, as long as its configuration can run; otherwise it falls back to a restart from the
/// last checkpoint once a repair or a spare makes one possible.
class InPlacePolicy : public Policy {
 public:
  void start(PolicyContext& ctx) final {
    ctx.slots.fill_from_spares(choice(ctx));
    if (const auto p = period(ctx)) {
      ctx.clock.run(*p, reference(ctx));
    } else {
      fallback_ = true;
      ctx.clock.wait(LostCause::kRepairWait);
    }
  }

  void slot_lost(PolicyContext& ctx, std::int64_t slot) final {
    count_failure(ctx);
    if (fallback_ || ctx.clock.now() < restart_until_) {
      fallback_ = true;
      ctx.clock.cancel_stalls();
      resume_from_checkpoint(ctx);
      return;
    }
    ctx.clock.stall(ctx.costs.detection, LostCause::kDetection);
    if (drops_interrupted_iteration()) ctx.clock.drop_partial_iteration();
    const std::vector<std::int64_t> filled = ctx.slots.fill_from_spares(choice(ctx));
    if (const auto p = period(ctx)) {
      const Nanos moved = std::max(copy_time(ctx, filled), failure_copy(ctx, slot));
      ctx.clock.stall(fixed_cost(ctx) + moved, LostCause::kReconfiguration);
      ctx.clock.run(*p, reference(ctx));
      return;
    }
    // No in-place configuration: back to the last checkpoint, restarting at once if the live
    // nodes can run from it, else waiting for a repair or a spare.
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
  /// State the survivors must move after `slot` failed.
  virtual Nanos failure_copy(PolicyContext&, std::int64_t) { return 0; }
  virtual bool drops_interrupted_iteration() const { return true; }
  /// Called first on every failure of a slot's node.
  virtual void count_failure(PolicyContext&) {}

 private:
  /// In fallback: restart from the checkpoint if the configuration can run, else wait.
  void resume_from_checkpoint(PolicyContext& ctx) {
    if (const auto p = period(ctx)) {
      ctx.clock.stall(ctx.costs.restart, LostCause::kRestart);
      ctx.clock.run(*p, reference(ctx));
      restart_until_ = ctx.clock.now() + ctx.costs.detection + ctx.costs.restart;
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
    return ctx.rates.recycle(ctx.slots.failed_workers(), ctx.slots.live_nodes());
  }
  /// The hole whose return gives the fastest iteration charged (a stage with every replica down
  /// first of all: the job cannot run without it); among equals, the lowest slot. Holes are tried
  /// in slot order, skipping one whose bound cannot beat the best so far, and stopping at the
  /// first that gives the fault-free time.
  JobSlots::SlotChoice choice(PolicyContext& ctx) override {
    return [&ctx](const std::vector<std::int64_t>& empty) {
      const Nanos t0 = ctx.rates.fault_free();
      std::int64_t chosen = empty.front();
      std::optional<Nanos> best;
      for (const std::int64_t slot : empty) {
        const std::vector<WorkerId> failed = ctx.slots.failed_workers_but(slot);
        const auto bound = ctx.rates.recycle_bound(failed);
        if (!bound || (best && std::max(*bound, t0) >= *best)) continue;
        const Nanos charged = std::max(*ctx.rates.recycle(failed, ctx.slots.live_nodes() + 1), t0);
        if (!best || charged < *best) {
          best = charged;
          chosen = slot;
        }
        if (*best == t0) break;
      }
      return chosen;
    };
  }
};

class OobleckPolicy final : public InPlacePolicy {
 protected:
  std::optional<Nanos> period(PolicyContext& ctx) override {
    // Every reconfiguration re-instantiates pipelines that each hold every layer, so the state
    // is lost only when the failures since the last one could have hit every pipeline.
    const std::int64_t pp = ctx.rates.layout().pp;
    const std::int64_t pipelines = (ctx.slots.live_workers() + unrecovered_ + pp - 1) / pp;
    if (unrecovered_ >= pipelines) {
      unrecovered_ = 0;  // the restart from the checkpoint starts afresh
      return std::nullopt;
    }
    return ctx.rates.oobleck(ctx.slots.live_workers(), ctx.slots.live_nodes());
  }
  Nanos fixed_cost(PolicyContext& ctx) override { return ctx.costs.oobleck_reconfigure; }
  Nanos failure_copy(PolicyContext& ctx, std::int64_t slot) override {
    return copy_time(ctx, {slot});  // the lost layers, copied from another pipeline
  }
  void count_failure(PolicyContext& ctx) override {
    const Nanos now = ctx.clock.now();
    unrecovered_ = now < recovered_at_ ? unrecovered_ + 1 : 1;
    recovered_at_ = now + ctx.costs.detection + ctx.costs.oobleck_reconfigure;
  }

 private:
  std::int64_t unrecovered_ = 0;  ///< failures since the last reconfiguration completed
  Nanos recovered_at_ = -1;
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
  void slot_lost(PolicyContext& ctx, std::int64_t) override {
    if (!ctx.clock.running() || ctx.clock.now() < restart_until_) {
      ctx.clock.cancel_stalls();
      ctx.slots.regroup();
      restart(ctx, ctx.costs.restart);
      return;
    }
    ctx.clock.stall(ctx.costs.detection, LostCause::kDetection);
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
      restart(ctx, ctx.costs.restart);
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
    return ctx.rates.bamboo(failed, ctx.slots.live_nodes(), ctx.slots.active_pipelines());
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
    restart(ctx, ctx.costs.restart);
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
    if (pipelines_ > 0) {
      ctx.clock.run(ctx.rates.pipelines(pipelines_), ctx.rates.fault_free());
    } else {
      ctx.clock.wait(LostCause::kRepairWait);
    }
  }
  void slot_lost(PolicyContext& ctx, std::int64_t) override {
    // A failure of the running job rolls it back; one that interrupts the restart after an
    // earlier failure (or comes while the job waits) only starts that restart again.
    const Nanos now = ctx.clock.now();
    if (ctx.clock.running() && now >= restart_until_) ++ctx.fallbacks;
    ctx.clock.cancel_stalls();
    ctx.clock.stall(ctx.costs.detection, LostCause::kDetection);
    ctx.clock.roll_back();
    regroup(ctx);
    restart(ctx, LostCause::kRestart, ctx.costs.restart);
    restart_until_ = now + ctx.costs.detection + ctx.costs.restart;
  }
  void node_joined(PolicyContext& ctx) override {
    regroup(ctx);
    if (runnable(ctx) <= pipelines_) return;
    if (ctx.clock.running() && !ctx.clock.stalled()) {
      // Re-grow: checkpoint (nothing is lost) and restart with the pipeline back.
      ctx.clock.checkpoint_now();
      restart(ctx, LostCause::kReconfiguration, ctx.costs.write + ctx.costs.restart);
    } else {
      const Nanos now = ctx.clock.now();
      if (!ctx.clock.running() || now < restart_until_) restart_until_ = now + ctx.costs.restart;
      ctx.clock.cancel_stalls();
      restart(ctx, LostCause::kRestart, ctx.costs.restart);
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
    if (pipelines_ == 0) {
      ctx.clock.wait(LostCause::kRepairWait);
      return;
    }
    ctx.clock.stall(cost, cause);
    ctx.clock.run(ctx.rates.pipelines(pipelines_), ctx.rates.fault_free());
  }

  bool shrink_;
  std::int32_t pipelines_ = 0;
  Nanos restart_until_ = -1;  ///< a failure before this interrupts a restart after a failure
};

}  // namespace

const std::vector<PolicyKind>& all_policies() {
  static const std::vector<PolicyKind> kAll = {PolicyKind::kRecycle, PolicyKind::kCheckpoint,
                                               PolicyKind::kElastic, PolicyKind::kOobleck,
                                               PolicyKind::kBamboo};
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
  }
  return "?";
}

PolicyKind parse_policy(std::string_view name, const std::string& where) {
  for (const PolicyKind kind : all_policies()) {
    if (to_string(kind) == name) return kind;
  }
  throw InputError(where, "unknown policy '" + shown(std::string(name)) +
                              "', expected recycle, checkpoint, elastic, oobleck, bamboo or all");
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

std::unique_ptr<Policy> make_policy(PolicyKind kind) {
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
  }
  RECYCLE_ASSERT(false, "every policy kind is made");
  return nullptr;
}

}  // namespace recycle::sim
