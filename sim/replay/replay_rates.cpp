#include "sim/replay/replay_rates.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

#include "core/error.hpp"
#include "planner/candidates.hpp"
#include "planner/generators.hpp"
#include "planner/language/failures.hpp"
#include "planner/pipeline_period.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/memory.hpp"
#include "planner/timing/period.hpp"
#include "sim/replay/batch_split.hpp"

namespace recycle::sim {

namespace {

/// The order search's budget per ReCycle plan (planner/candidates.hpp): a replay plans hundreds
/// of failure sets, so each gets a fortieth of what `recycle plan` spends on one.
constexpr std::int64_t kReplaySearchWork = 1'000'000;

using planner::CostModel;
using planner::Layout;
using planner::WorkerId;

}  // namespace

ReplayRates::ReplayRates(const planner::JobModel& model, const StepTable* table,
                         SharedPlans* shared)
    : model_(model), table_(table), shared_(shared) {}

template <typename Make>
std::optional<Nanos> ReplayRates::planned(char what, std::int64_t work, const std::string& key,
                                          const Make& make) {
  return shared_ != nullptr ? shared_->get(what, work, key, make) : make();
}

std::optional<Nanos> ReplayRates::one_pipeline(const CostModel& base, std::int32_t stages,
                                               std::int32_t microbatches, std::int32_t ring,
                                               bool estimate) const {
  const auto timed =
      planner::pipeline_period(base, model_.layout, model_.job.schedule, model_.job.source, stages,
                               microbatches, ring, estimate);
  if (!timed) return std::nullopt;
  return timed->period;
}

Nanos ReplayRates::fault_free() {
  if (fault_free_) return *fault_free_;
  const Layout& l = model_.layout;
  if (const auto row = table_pipelines(l.dp)) {
    if (!row->period) {
      throw InputError(model_.job.source, "the step table's row " + std::to_string(l.dp) + "x" +
                                              std::to_string(l.pp) +
                                              " says the job's own configuration does not fit");
    }
    fault_free_ = row->period;
  } else {
    const auto period = one_pipeline(model_.model, l.pp, l.microbatches, l.dp);
    if (!period) throw InputError(model_.job.source, "the job's schedule deadlocks");
    fault_free_ = *period;
  }
  ++configurations_;
  return *fault_free_;
}

std::int32_t ReplayRates::busiest(std::int32_t pipelines) const {
  RECYCLE_ASSERT(pipelines > 0, "a configuration has a pipeline");
  const Layout& l = model_.layout;
  const std::int64_t total = std::int64_t{l.dp} * l.microbatches;
  const std::int64_t most = (total + pipelines - 1) / pipelines;
  if (most > planner::kMaxMicrobatches) {
    throw InputError(model_.job.source, std::to_string(pipelines) + " pipelines would carry " +
                                            std::to_string(most) +
                                            " micro-batches each, more than the planners take");
  }
  return static_cast<std::int32_t>(most);
}

std::optional<Nanos> ReplayRates::pipelines(std::int32_t live) {
  const Layout& l = model_.layout;
  if (live == l.dp) return fault_free();
  if (const auto it = pipelines_.find(live); it != pipelines_.end()) return it->second;
  std::optional<Nanos> period;
  if (const auto row = table_pipelines(live)) {
    period = row->period;
  } else {
    const std::int32_t microbatches = busiest(live);
    bool runs = true;
    try {
      period = one_pipeline(model_.model, l.pp, microbatches, live);
    } catch (const InputError&) {
      // Fewer pipelines carry more micro-batches each, which may not fit the workers' memory (an
      // interleaved pipeline holds more as it runs more): a configuration that cannot run, as a
      // step-table row of none.
      runs = false;
    }
    if (runs && !period) throw InputError(model_.job.source, "the job's schedule deadlocks");
  }
  ++configurations_;
  pipelines_.emplace(live, period);
  return period;
}

std::optional<StepRow> ReplayRates::table_cluster(std::int64_t live_nodes) {
  if (table_ == nullptr) return std::nullopt;
  const auto row = table_->cluster_nodes(live_nodes);
  if (row && cluster_rows_used_.insert(live_nodes).second) {
    ++from_table_;
    ++configurations_;
  }
  return row;
}

std::optional<StepRow> ReplayRates::table_pipelines(std::int64_t live) {
  if (table_ == nullptr) return std::nullopt;
  const auto row = table_->pipelines(live, model_.layout.pp);
  if (row) ++from_table_;
  return row;
}

std::optional<StepRow> ReplayRates::table_nodes(std::int64_t live_nodes) {
  if (table_ == nullptr) return std::nullopt;
  const auto row = table_->nodes(live_nodes);
  if (row) ++from_table_;
  return row;
}

std::string ReplayRates::chunks_text() const {
  const Layout& l = model_.layout;
  return model_.job.source + ": " + model_.job.schedule + " runs " + std::to_string(l.interleave) +
         " chunks a worker" + (l.placement == planner::Placement::kV ? " placed in a V" : "");
}

std::string ReplayRates::failure_key(const std::vector<WorkerId>& failed) const {
  // Failure sets equal up to relabelling the pipelines share one plan where the pipelines are
  // interchangeable (planner/language/failures.hpp).
  const Layout& layout = model_.layout;
  return (model_.model.cluster.pipelines_interchangeable() ? planner::canonicalize(failed, layout)
                                                           : planner::keep_labels(failed, layout))
      .key;
}

std::optional<Nanos> ReplayRates::recycle(const std::vector<WorkerId>& failed,
                                          const LiveNodes& live) {
  if (failed.empty()) return fault_free();
  const Layout& layout = model_.layout;
  if (planner::dead_stage(failed, layout) >= 0) return std::nullopt;
  if (const auto row = table_cluster(live.cluster)) return row->period;
  const std::int64_t live_nodes = live.job;
  const std::string key = failure_key(failed);
  if (const auto it = recycle_.find(key); it != recycle_.end()) return it->second;
  std::optional<Nanos> period;
  if (const auto row = table_nodes(live_nodes)) {
    period = row->period;  // none: the configuration does not fit
  } else {
    const Nanos t0 = fault_free();
    const auto count = static_cast<std::int64_t>(failed.size());
    // The clock charges a plan faster than the fault-free schedule as that schedule (JobClock::
    // run): a plan known to be no slower is charged t0 unmade, unless it may be the first to
    // outrun t0 with this few failures, whose own period outrun() reports.
    const bool may_outrun = !outrun_ || count < outrun_->failed_workers;
    if (!may_outrun && within_fault_free(failed)) {
      period = t0;
    } else {
      period = plan_period(failed, kReplaySearchWork);
      if (*period < t0 && may_outrun) outrun_ = AdaptiveOutrun{count, *period, t0};
    }
  }
  ++configurations_;
  recycle_.emplace(key, period);
  return period;
}

std::optional<Nanos> ReplayRates::recycle_estimate(const std::vector<WorkerId>& failed,
                                                   const LiveNodes& live) {
  if (failed.empty()) return fault_free();
  const Layout& l = model_.layout;
  if (planner::dead_stage(failed, l) >= 0) return std::nullopt;
  if (table_ != nullptr) {
    if (const auto row = table_->cluster_nodes(live.cluster)) return row->period;
  }
  const std::int64_t live_nodes = live.job;
  // Past the order search's range a plan is its list schedules alone: the full plan costs no
  // more, and is kept for when the replay runs the set.
  const std::int64_t actions = std::int64_t{3} * l.dp * l.virtual_stages() * l.microbatches;
  if (actions > planner::kSearchActions) return recycle(failed, live);
  const std::string key = failure_key(failed);
  if (const auto it = recycle_.find(key); it != recycle_.end()) return it->second;
  if (const auto it = recycle_estimates_.find(key); it != recycle_estimates_.end()) {
    return it->second;
  }
  std::optional<Nanos> period;
  const auto row = table_ != nullptr ? table_->nodes(live_nodes) : std::nullopt;
  if (row) {
    period = row->period;
  } else {
    period = unsearched_period(failed);
  }
  recycle_estimates_.emplace(key, period);
  return period;
}

Nanos ReplayRates::unsearched_period(const std::vector<WorkerId>& failed) {
  const std::string key = failure_key(failed);
  if (const auto it = unsearched_.find(key); it != unsearched_.end()) return it->second;
  const Nanos period = plan_period(failed, 0);
  unsearched_.emplace(key, period);
  return period;
}

bool ReplayRates::within_fault_free(const std::vector<WorkerId>& failed) {
  const Layout& l = model_.layout;
  // A 2bw plan is chosen among lists made from the synchronous plan, so a better synchronous plan
  // need not give a better one: no bound.
  if (planner::recycle_base_for(model_.job.schedule) == "2bw") return false;
  // Where plans are searched, the plan without its search bounds the searched one (the search
  // only improves) and is what ranks the slots anyway; elsewhere one list schedule bounds it.
  if (std::int64_t{3} * l.dp * l.virtual_stages() * l.microbatches <= planner::kSearchActions) {
    return unsearched_period(failed) <= fault_free();
  }
  const std::string key = failure_key(failed);
  if (const auto it = within_fault_free_.find(key); it != within_fault_free_.end()) {
    return it->second;
  }
  const std::optional<Nanos> ceiling =
      planned('c', 0, key, [&] { return planner::recycle_period_ceiling(plan_options(failed)); });
  const bool within = ceiling && on_job_scale(*ceiling) <= fault_free();
  within_fault_free_.emplace(key, within);
  return within;
}

planner::RecycleOptions ReplayRates::plan_options(const std::vector<WorkerId>& failed) const {
  planner::RecycleOptions options;
  options.layout = model_.layout;
  options.base = planner::recycle_base_for(model_.job.schedule);
  options.model = model_.model;
  // Hundreds of failure sets: the planner's fast comparison of candidates at every size, and
  // every plan timed by its fast estimate on the direct network (only their ratio to the job's
  // schedule, timed the same way, is used).
  options.timed_actions = 0;
  options.run.network = planner::Network::kDirect;
  options.failed = failed;
  return options;
}

Nanos ReplayRates::plan_period(const std::vector<WorkerId>& failed, std::int64_t search_work) {
  const std::string key = failure_key(failed);
  const std::optional<Nanos> period = planned('p', search_work, key, [&]() -> std::optional<Nanos> {
    planner::RecycleOptions options = plan_options(failed);
    options.search_work = search_work;
    // A set is planned without the search to rank it, and the one the replay runs then with it:
    // the second plan starts from the first's candidates (the same plan, made once).
    const auto kept = memos_.find(key);
    if (search_work == 0 && kept == memos_.end()) {
      if (memo_order_.size() == kMemos) {
        memos_.erase(memo_order_.front());
        memo_order_.pop_front();
      }
      memo_order_.push_back(key);
      options.memo = &memos_[key];
    } else if (kept != memos_.end()) {
      options.memo = &kept->second;
    }
    const planner::RecyclePlan plan = planner::plan_recycle(options);
    if (search_work > 0 && kept != memos_.end()) {
      memos_.erase(kept);
      std::erase(memo_order_, key);
    }
    if (!plan.feasible) throw InputError(model_.job.source, "no ReCycle plan: " + plan.reason);
    return plan.estimate.period;
  });
  return on_job_scale(*period);
}

std::optional<Nanos> ReplayRates::recycle_bound(const std::vector<WorkerId>& failed) {
  const Layout& layout = model_.layout;
  if (planner::dead_stage(failed, layout) >= 0) return std::nullopt;
  const std::string key = failure_key(failed);
  if (const auto it = recycle_bounds_.find(key); it != recycle_bounds_.end()) return it->second;
  Nanos bound = 0;  // a measured step table bounds nothing
  if (table_ == nullptr) {
    planner::RecycleOptions options;
    options.layout = layout;
    options.base = planner::recycle_base_for(model_.job.schedule);
    options.model = model_.model;
    options.failed = failed;
    bound =
        on_job_scale(*planned('b', 0, key, [&] { return planner::recycle_period_bound(options); }));
  }
  recycle_bounds_.emplace(key, bound);
  return bound;
}

Nanos ReplayRates::on_job_scale(Nanos estimate) {
  if (!recycle_base_) {
    const Layout& l = model_.layout;
    recycle_base_ = one_pipeline(model_.model, l.pp, l.microbatches, l.dp, true);
    if (!recycle_base_) throw InputError(model_.job.source, "the job's schedule deadlocks");
  }
  // The slowdown against the job's own schedule, timed alike, applied to the job's iteration.
  const long double ratio =
      static_cast<long double>(estimate) / static_cast<long double>(*recycle_base_);
  return static_cast<Nanos>(std::llround(ratio * static_cast<long double>(fault_free())));
}

std::optional<Nanos> ReplayRates::template_period(std::int32_t stages, std::int32_t microbatches,
                                                  std::int32_t ring) {
  const auto key = std::make_tuple(stages, microbatches, ring);
  if (const auto it = template_periods_.find(key); it != template_periods_.end()) {
    return it->second;
  }
  auto found = templates_.find(stages);
  if (found == templates_.end()) {
    std::optional<CostModel> model;
    try {
      // The job re-split over `stages` stages, chunks placed as its schedule places them: the
      // one job model (planner/job_model.hpp). Its dp only shards a distributed optimizer's
      // state, over the template's pipelines when it runs (CostModel::kept_bytes).
      profiles::Job shorter = model_.job;
      shorter.parallel.pp = stages;
      shorter.parallel.global_batch = shorter.parallel.microbatch_size * shorter.parallel.dp;
      model = planner::job_model(std::move(shorter)).model;
    } catch (const InputError&) {
      // A template the model cannot be split into (more stages than layers, ...).
    }
    found = templates_.emplace(stages, std::move(model)).first;
  }
  std::optional<Nanos> period;
  if (found->second) {
    try {
      period = one_pipeline(*found->second, stages, microbatches, ring);
    } catch (const InputError&) {
      // The template does not fit the workers' memory, or the schedule does not take the layout.
    }
  }
  template_periods_.emplace(key, period);
  return period;
}

std::optional<Nanos> ReplayRates::oobleck(std::int64_t live_workers, const LiveNodes& live) {
  if (live_workers >= model_.layout.workers()) return fault_free();
  if (const auto row = table_cluster(live.cluster)) return row->period;
  const std::int64_t live_nodes = live.job;
  if (const auto it = oobleck_.find(live_workers); it != oobleck_.end()) return it->second;
  std::optional<Nanos> best;
  if (const auto row = table_nodes(live_nodes)) {
    best = row->period;  // none: the configuration does not fit
  } else {
    const Layout& l = model_.layout;
    const std::int64_t batch = std::int64_t{l.dp} * l.microbatches;
    const std::int64_t fewest_pipelines = (live_workers + l.pp - 1) / l.pp;
    // Candidates (pipelines, workers used): as few pipelines as hold every worker (the longest
    // templates), as many as the job had (the shortest), and only full-depth pipelines with the
    // workers left over idle (the job's own template, which always fits); the fastest wins, as
    // Oobleck's planner picks the best instantiation.
    const std::vector<std::pair<std::int64_t, std::int64_t>> candidates{
        {fewest_pipelines, live_workers},
        {std::min<std::int64_t>(l.dp, live_workers), live_workers},
        {live_workers / l.pp, live_workers / l.pp * l.pp}};
    for (const auto& [pipelines, used] : candidates) {
      if (pipelines < 1) continue;
      const std::int64_t shorter = used / pipelines;
      const std::int64_t longer_count = used % pipelines;
      if (shorter < 1 || shorter > l.pp || (longer_count > 0 && shorter + 1 > l.pp)) continue;
      std::vector<std::pair<std::int64_t, std::int64_t>> sizes;  // (stages, pipelines)
      if (longer_count > 0) sizes.emplace_back(shorter + 1, longer_count);
      sizes.emplace_back(shorter, pipelines - longer_count);
      // Oobleck's split: each template's time per micro-batch at Oobleck's 4 x stages
      // micro-batches, the batch split min-max (sim/replay/batch_split.hpp).
      std::vector<TemplateShare> shares;
      for (const auto& [stages, count] : sizes) {
        const std::int64_t reference =
            std::min<std::int64_t>(4 * stages, planner::kMaxMicrobatches);
        const auto period =
            template_period(static_cast<std::int32_t>(stages), static_cast<std::int32_t>(reference),
                            static_cast<std::int32_t>(pipelines));
        if (!period) break;
        shares.push_back({count, *period, reference});
      }
      if (shares.size() != sizes.size()) continue;
      const std::vector<std::int64_t> most = split_batch(shares, batch);
      std::optional<Nanos> slowest = Nanos{0};
      for (std::size_t i = 0; i < sizes.size() && slowest; ++i) {
        if (most[i] < 1) continue;
        if (most[i] > planner::kMaxMicrobatches) {
          slowest.reset();
          break;
        }
        const auto period = template_period(static_cast<std::int32_t>(sizes[i].first),
                                            static_cast<std::int32_t>(most[i]),
                                            static_cast<std::int32_t>(pipelines));
        slowest = period ? std::optional<Nanos>(std::max(*slowest, *period)) : std::nullopt;
      }
      if (slowest && (!best || *slowest < *best)) best = slowest;
    }
  }
  ++configurations_;
  oobleck_.emplace(live_workers, best);
  return best;
}

CostModel ReplayRates::bamboo_model(const std::vector<std::int32_t>& failed) const {
  const CostModel& base = model_.model;
  const std::int32_t pp = model_.layout.pp;
  const auto at = [](const auto& v, std::int32_t i) { return v[static_cast<std::size_t>(i)]; };
  const auto is_failed = [&](std::int32_t s) {
    return std::binary_search(failed.begin(), failed.end(), s);
  };
  const std::vector<planner::StageCost>& costs = base.compute.virtual_stages;
  CostModel out = base;
  out.compute.virtual_stages.clear();
  out.compute.optimizer.clear();
  out.activation_bytes.clear();
  out.output_bytes.clear();
  out.param_bytes.clear();
  out.state_bytes.clear();
  out.optimizer_state_bytes.clear();
  for (std::int32_t s = 0; s < pp; ++s) {
    if (is_failed(s)) continue;
    // The block this worker runs: its own stage and, if it failed, its successor's.
    std::vector<std::int32_t> block{s};
    if (is_failed((s + 1) % pp)) block.push_back((s + 1) % pp);
    planner::StageCost c;
    // The redundant forward of its successor (stage s holds a replica of s + 1, the last of 0),
    // unless the successor failed: its replica is the work it runs now, and the replica of the
    // stage after it was on the failed node.
    const bool replicates = block.size() == 1 && pp > 1;
    if (replicates) c.backward_weight += at(costs, (s + 1) % pp).forward;
    Nanos optimizer = 0;
    Bytes activations = 0;
    Bytes params = 0;
    Bytes state = 0;
    Bytes optimizer_state = 0;
    for (const std::int32_t b : block) {
      const planner::StageCost& x = at(costs, b);
      c.forward += x.forward;
      c.backward_input += x.backward_input;
      c.backward_weight += x.backward_weight;
      if (!base.compute.optimizer.empty()) optimizer += at(base.compute.optimizer, b);
      if (!base.activation_bytes.empty()) activations += at(base.activation_bytes, b);
      if (!base.param_bytes.empty()) params += at(base.param_bytes, b);
      if (!base.state_bytes.empty()) state += at(base.state_bytes, b);
      if (!base.optimizer_state_bytes.empty()) optimizer_state += at(base.optimizer_state_bytes, b);
    }
    out.compute.virtual_stages.push_back(c);
    if (!base.compute.optimizer.empty()) out.compute.optimizer.push_back(optimizer);
    if (!base.activation_bytes.empty()) out.activation_bytes.push_back(activations);
    if (!base.output_bytes.empty()) {
      const std::int32_t last = block.back() == 0 ? s : block.back();
      out.output_bytes.push_back(at(base.output_bytes, last));
    }
    if (!base.param_bytes.empty()) out.param_bytes.push_back(params);
    // The replica's weights stay in memory next to the worker's own state.
    if (replicates && !base.param_bytes.empty()) state += at(base.param_bytes, (s + 1) % pp);
    if (!base.state_bytes.empty()) out.state_bytes.push_back(state);
    if (!base.optimizer_state_bytes.empty()) out.optimizer_state_bytes.push_back(optimizer_state);
  }
  if (!base.cluster.free()) {
    const profiles::Profile& profile = model_.synthesis.profile;
    out.cluster = planner::Cluster(profile.hardware, profile.tensor_parallel,
                                   static_cast<std::int32_t>(out.compute.virtual_stages.size()));
  }
  return out;
}

std::optional<Nanos> ReplayRates::bamboo_fault_free() {
  if (bamboo_fault_free_ || !bamboo_unfit_.empty()) return bamboo_fault_free_;
  const Layout& l = model_.layout;
  if (l.interleave != 1) {
    bamboo_unfit_ = chunks_text() + "; Bamboo's stage replicates the one stage after it";
    return std::nullopt;
  }
  // A measured fault-free step already holds whatever the redundancy costs.
  std::optional<Nanos> period;
  if (const auto row = table_pipelines(l.dp)) {
    period = row->period;
    if (!period) {
      bamboo_unfit_ = model_.job.source +
                      ": the step table says the job's own configuration does "
                      "not fit";
      return std::nullopt;
    }
  } else {
    try {
      period = one_pipeline(bamboo_model({}), l.pp, l.microbatches, l.dp);
    } catch (const InputError& e) {
      bamboo_unfit_ = e.what();  // the replicas do not fit the workers' memory
      return std::nullopt;
    }
    if (!period)
      throw InputError(model_.job.source, "the job's schedule deadlocks with redundancy");
  }
  ++configurations_;
  bamboo_fault_free_ = *period;
  return period;
}

std::optional<Nanos> ReplayRates::bamboo_pipelines(std::int32_t pipelines) {
  const Layout& l = model_.layout;
  if (pipelines == l.dp) return bamboo_fault_free();
  if (!bamboo_fault_free()) return std::nullopt;
  if (const auto it = bamboo_shrunk_.find(pipelines); it != bamboo_shrunk_.end()) {
    return it->second;
  }
  std::optional<Nanos> period;
  if (const auto row = table_pipelines(pipelines)) {
    period = row->period;
  } else {
    try {
      period = one_pipeline(bamboo_model({}), l.pp, busiest(pipelines), pipelines);
    } catch (const InputError&) {
      period.reset();  // the busier pipelines' activations do not fit next to the replicas
    }
  }
  ++configurations_;
  bamboo_shrunk_.emplace(pipelines, period);
  return period;
}

std::optional<Nanos> ReplayRates::bamboo(const std::vector<WorkerId>& failed, const LiveNodes& live,
                                         std::int32_t pipelines) {
  std::optional<Nanos> slowest = bamboo_pipelines(pipelines);
  if (failed.empty() || !slowest) return slowest;
  if (const auto row = table_cluster(live.cluster)) return row->period;
  if (const auto row = table_nodes(live.job)) return row->period;
  for (std::size_t i = 0; i < failed.size();) {
    std::vector<std::int32_t> stages;
    std::size_t j = i;
    for (; j < failed.size() && failed[j].dp == failed[i].dp; ++j)
      stages.push_back(failed[j].stage);
    i = j;
    const auto key = std::make_pair(stages, pipelines);
    auto it = bamboo_pipeline_.find(key);
    if (it == bamboo_pipeline_.end()) {
      const CostModel merged = bamboo_model(stages);
      const auto left = static_cast<std::int32_t>(merged.compute.virtual_stages.size());
      std::optional<Nanos> period;
      try {
        period = one_pipeline(merged, left, busiest(pipelines), pipelines);
        if (!period) throw InputError(model_.job.source, "a bamboo take-over schedule deadlocks");
      } catch (const InputError&) {
        period.reset();  // the taking-over worker cannot hold both stages: no take-over
      }
      ++configurations_;
      it = bamboo_pipeline_.emplace(key, period).first;
    }
    if (!it->second) return std::nullopt;
    slowest = std::max(*slowest, *it->second);
  }
  return slowest;
}

Nanos ReplayRates::state_copy(std::int32_t stage) const {
  const CostModel& m = model_.model;
  // A peer on another node: gpus_per_node pipelines away is always off this worker's node.
  const WorkerId here{0, stage};
  const WorkerId peer{m.cluster.gpus_per_node(), stage};
  return m.cluster.transfer_time(peer, here, m.kept_bytes(stage));
}

bool ReplayRates::shards_survive(const std::vector<WorkerId>& down,
                                 const std::vector<WorkerId>& burst) const {
  const CostModel& m = model_.model;
  if (m.optimizer_shards <= 1 || burst.empty()) return true;
  if (m.optimizer_shard_copies == 1) return false;
  const auto has = [](const std::vector<WorkerId>& v, const WorkerId& w) {
    return std::find(v.begin(), v.end(), w) != v.end();
  };
  const std::int32_t dp = model_.layout.dp;
  for (const WorkerId& w : burst) {
    // The replica of w's shard: on the next rank of its stage live before the burst.
    for (std::int32_t k = 1; k < dp; ++k) {
      const WorkerId next{(w.dp + k) % dp, w.stage};
      if (has(burst, next)) return false;
      if (!has(down, next)) break;
    }
  }
  return true;
}

Nanos ReplayRates::shard_copy(std::int32_t stage) const {
  const CostModel& m = model_.model;
  if (m.optimizer_shard_copies < 2 || m.optimizer_state_bytes.empty()) return 0;
  const WorkerId here{0, stage};
  const WorkerId peer{m.cluster.gpus_per_node(), stage};
  const Bytes shard =
      m.optimizer_state_bytes[static_cast<std::size_t>(stage)] / m.optimizer_shard_copies;
  return m.cluster.transfer_time(peer, here, shard);
}

}  // namespace recycle::sim
