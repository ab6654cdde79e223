// What a job replay charges per iteration in each configuration a resilience policy runs
// (docs/policies.md): steady-state periods from the planners and the iteration simulator's model
// (planner::steady_state: the same walk `recycle simulate` reports), each computed once and
// cached, or a measured step table's entry where it has one.
//
// Configurations and how they are timed:
//  - fault-free:  the job's schedule on its DP x PP layout;
//  - pipelines P: P full-depth pipelines carrying the whole global batch (ceil(DP x m / P)
//                 micro-batches on the busiest), as elastic training runs after dropping some;
//  - recycle:     ReCycle's adaptive plan for the failure set, normalized so that failure sets
//                 equal up to relabelling the pipelines share one entry. The plan and the job's
//                 own schedule are timed by one model (the planners' fast estimate on the direct
//                 network); the plan's period over the job schedule's scales the fault-free
//                 iteration (the clock charges no less than that: re-routed work that fits the
//                 job schedule's bubbles leaves the iteration at its fault-free time);
//  - oobleck:     heterogeneous pipelines from Oobleck's templates (pipelines of k stages with the
//                 layers re-split, k from the fewest whose memory fits to PP), the live workers
//                 spread over P of them and the batch split as Oobleck's planner splits it
//                 (min-max over the templates' times per micro-batch: batch_split.hpp); the
//                 iteration is the slowest pipeline's;
//  - bamboo:      every stage also runs its successor's forward (folded into its W, the op no other
//                 waits for, so schedules that defer W fill bubbles with it); a failed stage's work
//                 runs on its predecessor; the iteration is the slowest pipeline's; after a
//                 reconfiguration, fewer whole pipelines carry the whole batch.
// Pipelines that run alike are timed as one pipeline whose all-reduces ring with the others
// (Cluster::set_absent_ring_peers), exact when every pipeline sits on whole nodes of its own; the
// whole layout is timed otherwise.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "planner/job_model.hpp"
#include "planner/language/schedule.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/cost_model.hpp"
#include "profiles/job.hpp"
#include "sim/replay/shared_plans.hpp"
#include "sim/replay/step_table.hpp"

namespace recycle::sim {

/// The adaptive plan with the fewest failed workers that ran faster than the job's fault-free
/// schedule (ReplayRates::outrun).
struct AdaptiveOutrun {
  std::int64_t failed_workers = 0;
  Nanos plan = 0;        ///< the plan's iteration time, on the job's scale
  Nanos fault_free = 0;  ///< the job's
};

/// The live nodes a configuration has: the job's (its filled slots) and the cluster's (spares
/// included); a step table may key rows by either (sim/replay/step_table.hpp).
struct LiveNodes {
  std::int64_t job = 0;
  std::int64_t cluster = 0;
};

class ReplayRates {
 public:
  /// `table` may be null; it must outlive the rates. `shared`, where not null, holds the plans of
  /// other replays of the same model (sim/replay/shared_plans.hpp) and must outlive the rates.
  ReplayRates(const planner::JobModel& model, const StepTable* table,
              SharedPlans* shared = nullptr);

  [[nodiscard]] const planner::Layout& layout() const noexcept { return model_.layout; }

  /// The job's own iteration time with every worker up.
  [[nodiscard]] Nanos fault_free();
  /// `live` of the job's pipelines, full depth, carrying the whole batch; nullopt where a step
  /// table says they do not fit.
  [[nodiscard]] std::optional<Nanos> pipelines(std::int32_t live);
  /// ReCycle with `failed` workers (sorted); nullopt when some stage has no live replica.
  /// The plan's iteration time on the job's scale, which may be below fault_free(): the replay's
  /// clock charges no configuration less than the fault-free time (replay_clock.hpp). Where the
  /// plan is known to be no slower than fault_free() without being made (within_fault_free),
  /// fault_free() is returned, which the clock charges alike, except for a failure set that may be
  /// the first to outrun it (outrun() reports that plan's own period).
  [[nodiscard]] std::optional<Nanos> recycle(const std::vector<planner::WorkerId>& failed,
                                             const LiveNodes& live);
  /// recycle(failed) where it is known, else the plan without the order search (the best of the
  /// planner's list schedules: never faster than recycle()): what ranks the slots a spare may
  /// fill by the charge, max(period, fault_free()), without the cost of a full plan for each.
  [[nodiscard]] std::optional<Nanos> recycle_estimate(const std::vector<planner::WorkerId>& failed,
                                                      const LiveNodes& live);
  /// A lower bound on recycle(failed), found without planning (planner::recycle_period_bound, on
  /// the job's scale; 0 with a step table): what spares the plans of failure sets that cannot win.
  /// nullopt when some stage has no live replica.
  [[nodiscard]] std::optional<Nanos> recycle_bound(const std::vector<planner::WorkerId>& failed);
  /// The adaptive plan with the fewest failed workers (the first such among equals) that ran
  /// faster than the job's own fault-free schedule, if one did: a schedule with fewer bubbles
  /// would speed up every policy.
  [[nodiscard]] const std::optional<AdaptiveOutrun>& outrun() const noexcept { return outrun_; }
  /// Oobleck with `live_workers` workers; nullopt when they cannot hold one pipeline.
  [[nodiscard]] std::optional<Nanos> oobleck(std::int64_t live_workers, const LiveNodes& live);
  /// Bamboo with every worker up: the redundant forwards' always-on cost; nullopt when a stage
  /// cannot hold its successor's replica (bamboo_unfit() says why: several chunks a worker, or
  /// the replicas' weights do not fit the workers' memory).
  [[nodiscard]] std::optional<Nanos> bamboo_fault_free();
  [[nodiscard]] const std::string& bamboo_unfit() const noexcept { return bamboo_unfit_; }
  /// Bamboo on `pipelines` whole pipelines carrying the whole batch, with redundancy.
  [[nodiscard]] std::optional<Nanos> bamboo_pipelines(std::int32_t pipelines);
  /// Bamboo on `pipelines` pipelines with `failed` workers (sorted) among them, none two
  /// consecutive stages of one pipeline; nullopt when a worker cannot hold the stage it takes over.
  [[nodiscard]] std::optional<Nanos> bamboo(const std::vector<planner::WorkerId>& failed,
                                            const LiveNodes& live, std::int32_t pipelines);
  /// Copying a worker of `stage`'s parameters, gradients and optimizer state from a live peer
  /// over the network (0 on a free network).
  [[nodiscard]] Nanos state_copy(std::int32_t stage) const;
  /// Whether every optimizer shard is still on a live rank after the failure that took `burst`
  /// down, `down` being the workers down before it (docs/policies.md, "The distributed
  /// optimizer"): always when every rank holds the whole state; never when each shard has one
  /// copy (the failed rank's is gone); with a replica on the next rank of the stage, unless the
  /// burst took two ranks of one stage next to each other among those live before it (a shard
  /// and its replica).
  [[nodiscard]] bool shards_survive(const std::vector<planner::WorkerId>& down,
                                    const std::vector<planner::WorkerId>& burst) const;
  /// Making a lost replica again: one shard of `stage` copied from a live peer over the network;
  /// 0 without replicas.
  [[nodiscard]] Nanos shard_copy(std::int32_t stage) const;

  /// Distinct configurations timed so far (cache entries), and how many came from the table.
  [[nodiscard]] std::int64_t configurations() const noexcept { return configurations_; }
  [[nodiscard]] std::int64_t from_table() const noexcept { return from_table_; }

 private:
  /// The period of the job's schedule on one pipeline that stands for `ring` pipelines, as
  /// `recycle simulate` runs it or, with `estimate`, the planners' fast estimate on the direct
  /// network (what the ReCycle plans are timed by); InputError naming the job when its workers
  /// run out of memory.
  [[nodiscard]] std::optional<Nanos> one_pipeline(const planner::CostModel& model,
                                                  std::int32_t stages, std::int32_t microbatches,
                                                  std::int32_t ring, bool estimate = false) const;
  /// How the replay asks the planner for a plan of `failed` (its search work aside).
  [[nodiscard]] planner::RecycleOptions plan_options(
      const std::vector<planner::WorkerId>& failed) const;
  /// Whether the ReCycle plan for `failed` is known to run no slower than the fault-free schedule
  /// on the job's scale, where the clock charges it as that schedule anyway: by the plan without
  /// its order search where plans are searched, else by one list schedule
  /// (planner::recycle_period_ceiling); never on a 2bw base.
  [[nodiscard]] bool within_fault_free(const std::vector<planner::WorkerId>& failed);
  /// The plan for `failed` without its order search, on the job's scale (cached).
  [[nodiscard]] Nanos unsearched_period(const std::vector<planner::WorkerId>& failed);
  /// The ReCycle plan's period for `failed` on the job's scale, with `search_work` for its order
  /// search; InputError naming the job when no plan exists.
  [[nodiscard]] Nanos plan_period(const std::vector<planner::WorkerId>& failed,
                                  std::int64_t search_work);
  /// The planner's result `make()` of kind `what` for the failure set `key`, from the shared plans
  /// where there are some (SharedPlans::get), else made.
  template <typename Make>
  [[nodiscard]] std::optional<Nanos> planned(char what, std::int64_t work, const std::string& key,
                                             const Make& make);
  /// The key of `failed` in the ReCycle caches.
  [[nodiscard]] std::string failure_key(const std::vector<planner::WorkerId>& failed) const;
  /// A fast estimate (the planners', on the direct network) as the job's iteration: scaled by the
  /// job's fault-free time over its schedule's estimate.
  [[nodiscard]] Nanos on_job_scale(Nanos estimate);
  [[nodiscard]] std::optional<Nanos> template_period(std::int32_t stages, std::int32_t microbatches,
                                                     std::int32_t ring);
  [[nodiscard]] planner::CostModel bamboo_model(const std::vector<std::int32_t>& failed) const;
  /// The step table's rows (nullopt: none for the configuration), counted as from the table.
  [[nodiscard]] std::optional<StepRow> table_nodes(std::int64_t live_nodes);
  /// The `cluster:N` row, looked up before any cache (it depends on the spares, which the caches'
  /// keys do not hold); each row counted once.
  [[nodiscard]] std::optional<StepRow> table_cluster(std::int64_t live_nodes);
  [[nodiscard]] std::optional<StepRow> table_pipelines(std::int64_t live);
  /// "job.json: zb-v runs 2 chunks a worker placed in a V".
  [[nodiscard]] std::string chunks_text() const;
  /// Micro-batches of the busiest of `pipelines` pipelines carrying the whole batch.
  [[nodiscard]] std::int32_t busiest(std::int32_t pipelines) const;

  planner::JobModel model_;  ///< the job (model_.job) and its model
  const StepTable* table_;
  SharedPlans* shared_;
  std::int64_t configurations_ = 0;
  std::int64_t from_table_ = 0;
  std::optional<Nanos> fault_free_;
  std::optional<Nanos> bamboo_fault_free_;
  std::string bamboo_unfit_;
  std::optional<Nanos> recycle_base_;  ///< the job's schedule, timed as the plans are
  std::map<std::string, std::optional<Nanos>> recycle_;
  std::optional<AdaptiveOutrun> outrun_;
  std::map<std::string, std::optional<Nanos>> recycle_bounds_;
  std::map<std::string, std::optional<Nanos>> recycle_estimates_;
  std::map<std::string, bool> within_fault_free_;  ///< where plans are not searched
  std::map<std::string, Nanos> unsearched_;
  /// The candidates of the latest plans made without the search (planner::CandidateMemo), which
  /// the set's plan with it starts from: kept for the last kMemos sets, dropped once used.
  static constexpr std::size_t kMemos = 64;
  std::map<std::string, planner::CandidateMemo> memos_;
  std::deque<std::string> memo_order_;
  std::set<std::int64_t> cluster_rows_used_;
  std::map<std::int32_t, std::optional<Nanos>> pipelines_;
  std::map<std::int64_t, std::optional<Nanos>> oobleck_;
  std::map<std::pair<std::vector<std::int32_t>, std::int32_t>, std::optional<Nanos>>
      bamboo_pipeline_;  ///< by failed stages of one pipeline and pipelines in use
  std::map<std::int32_t, std::optional<Nanos>> bamboo_shrunk_;
  std::map<std::int32_t, std::optional<planner::CostModel>> templates_;  ///< by stages
  std::map<std::tuple<std::int32_t, std::int32_t, std::int32_t>, std::optional<Nanos>>
      template_periods_;
};

}  // namespace recycle::sim
