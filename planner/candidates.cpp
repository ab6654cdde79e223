#include "planner/candidates.hpp"

#include <algorithm>
#include <optional>
#include <tuple>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "planner/language/semantics.hpp"
#include "planner/list_scheduler.hpp"
#include "planner/order_search.hpp"

namespace recycle::planner {

namespace {

constexpr std::int64_t kRandomStarts = 1000;  ///< at most, for the search
constexpr std::uint64_t kSearchSeed = 1;

struct Candidate {
  std::vector<WorkerSchedule> workers;
  std::optional<SteadyState> estimate;  ///< nullopt: deadlocks (never for a list schedule)
};

/// (period, makespan): the objective; a candidate that deadlocks is worst.
bool better(const Candidate& a, const Candidate& b) {
  if (!a.estimate) return false;
  if (!b.estimate) return true;
  return std::tie(a.estimate->period, a.estimate->makespan) <
         std::tie(b.estimate->period, b.estimate->makespan);
}

Candidate evaluate(const Schedule& skeleton, const CostModel& model,
                   std::vector<WorkerSchedule> workers) {
  Schedule s = skeleton;
  s.workers = std::move(workers);
  Candidate c;
  c.estimate = direct_steady_state(s, model);
  c.workers = std::move(s.workers);
  return c;
}

/// Whether every worker of `workers` holds at most its stage's limit (in chunks).
bool fits(const std::vector<WorkerSchedule>& workers, const std::vector<std::int32_t>& limit) {
  return std::all_of(workers.begin(), workers.end(), [&](const WorkerSchedule& w) {
    return peak_held(w.actions.data(), w.actions.data() + w.actions.size()) <=
           limit[static_cast<std::size_t>(w.id.stage)];
  });
}

/// One pipeline's orders as worker lists of a dp-1 skeleton.
std::vector<WorkerSchedule> as_workers(const std::vector<std::vector<Action>>& stages) {
  std::vector<WorkerSchedule> out;
  for (std::size_t s = 0; s < stages.size(); ++s)
    out.push_back({{0, static_cast<std::int32_t>(s)}, stages[s]});
  return out;
}

/// Random micro-batch ranks for list_schedule's ties: the shuffles of one fixed seed, so plans
/// are the same on every run and machine.
std::vector<std::vector<std::int32_t>> random_ranks(const Layout& layout, std::int64_t count) {
  Rng rng(kSearchSeed);
  std::vector<std::vector<std::int32_t>> ranks;
  const auto size =
      static_cast<std::size_t>(layout.dp) * static_cast<std::size_t>(layout.microbatches);
  for (std::int64_t k = 0; k < count; ++k) {
    std::vector<std::int32_t> rank(size);
    for (std::size_t i = 0; i < size; ++i) rank[i] = static_cast<std::int32_t>(i);
    for (std::size_t i = size; i > 1; --i) std::swap(rank[i - 1], rank[rng.below(i)]);
    ranks.push_back(std::move(rank));
  }
  return ranks;
}

/// The base schedule's share, `extra` micro-batches more, capped by `limit` (all in chunks).
std::vector<std::int32_t> share_plus(const Layout& layout, const OrderPlanOptions& options,
                                     const std::vector<std::int32_t>& limit, std::int32_t extra) {
  std::vector<std::int32_t> share =
      options.share.empty() ? one_f_one_b_limit(layout) : options.share;
  for (std::size_t s = 0; s < share.size(); ++s) {
    share[s] = std::min(share[s] + static_cast<std::int32_t>(chunk_limit(extra, layout.interleave)),
                        limit[s]);
  }
  return share;
}

/// The limit variants of step 1 (in chunks), without repeats.
std::vector<std::vector<std::int32_t>> limit_variants(const Layout& layout,
                                                      const OrderPlanOptions& options,
                                                      const std::vector<std::int32_t>& limit) {
  std::vector<std::vector<std::int32_t>> out{limit};
  for (const std::int32_t extra : {0, 2}) {
    std::vector<std::int32_t> share = share_plus(layout, options, limit, extra);
    if (std::find(out.begin(), out.end(), share) == out.end()) out.push_back(std::move(share));
  }
  return out;
}

/// The search of planner/order_search.hpp from `base` and from list schedules with random
/// micro-batch ranks; returns `base` when nothing is better.
Candidate improve(const Schedule& skeleton, const CostModel& model, const OrderPlanOptions& options,
                  const std::vector<std::int32_t>& limit, Candidate base) {
  const Costs& costs = model.compute;
  if (base.estimate->period <= period_lower_bound(skeleton, model, limit))
    return base;  // nothing to gain
  const Layout& layout = skeleton.layout;
  const std::int64_t actions =
      3 * static_cast<std::int64_t>(layout.dp) * layout.virtual_stages() * layout.microbatches;
  // A list schedule costs about ten of the search's node visits per action; a quarter of the work
  // goes to the random starts, which seed the search in the order of their makespans.
  const std::int64_t randoms =
      std::min<std::int64_t>(kRandomStarts, options.search_work / 4 / (10 * actions));
  const auto variants = limit_variants(layout, options, limit);
  std::vector<std::pair<Nanos, std::vector<WorkerSchedule>>> pool;
  std::int64_t k = 0;
  for (std::vector<std::int32_t>& rank : random_ranks(layout, randoms)) {
    ListScheduleInput input{&skeleton,
                            &costs,
                            variants[static_cast<std::size_t>(k) % variants.size()],
                            options.defer_rerouted_w,
                            false,
                            false,
                            std::move(rank)};
    input.forward_waits_for_gradient = (k / static_cast<std::int64_t>(variants.size())) % 2 == 1;
    input.network = &model;
    ListScheduleResult r = list_schedule(input);
    pool.emplace_back(r.makespan, std::move(r.workers));
    ++k;
  }
  std::stable_sort(pool.begin(), pool.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::vector<WorkerSchedule>> starts{base.workers};
  for (auto& p : pool) starts.push_back(std::move(p.second));
  const OrderSearchResult found = search_orders(
      {&skeleton, &model, limit, options.search_work - randoms * 10 * actions}, starts);
  Candidate searched{found.workers, found.score};
  return better(searched, base) ? searched : base;
}

/// A candidate of step 1: its memory limits (chunks, per stage) and look-aheads.
struct Variant {
  std::vector<std::int32_t> limit;
  bool weight_waits = false;
  bool forward_waits = false;
};

/// The list schedule of `variant`, on the direct network of `model`.
ListScheduleResult run_variant(const Schedule& skeleton, const CostModel& model,
                               const OrderPlanOptions& options, const Variant& variant,
                               Nanos give_up_at = kMaxClock, bool makespan_only = false) {
  ListScheduleInput input{&skeleton,
                          &model.compute,
                          variant.limit,
                          options.defer_rerouted_w,
                          false,
                          variant.weight_waits,
                          {}};
  input.forward_waits_for_gradient = variant.forward_waits;
  input.network = &model;
  input.give_up_at = give_up_at;
  input.makespan_only = makespan_only;
  return list_schedule(input);
}

}  // namespace

Nanos period_ceiling(const Schedule& skeleton, const CostModel& model,
                     const OrderPlanOptions& options) {
  // The first candidate of both ways of step 1: the limit, no look-ahead. Its computes end by its
  // makespan; each stage's all-reduce then starts at the latest (its last peer's last compute)
  // and its optimizer steps after it (staggered) or after every stage's (barrier).
  const Layout& layout = skeleton.layout;
  Nanos reduce = 0, step = 0;
  std::vector<WorkerId> peers;
  for (std::int32_t s = 0; s < layout.pp; ++s) {
    peers.clear();
    for (std::int32_t d = 0; d < layout.dp; ++d) {
      if (!std::binary_search(skeleton.failed.begin(), skeleton.failed.end(), WorkerId{d, s}))
        peers.push_back({d, s});
    }
    if (!peers.empty()) reduce = std::max(reduce, model.all_reduce_time(s, peers));
    step = std::max(step, model.compute.duration({ActionType::kOptimizer, s, -1, 0}));
  }
  const Nanos computes =
      run_variant(skeleton, model, options,
                  {chunk_limits(layout, options.memory_limit), false, false}, kMaxClock, true)
          .makespan;
  return std::min(kMaxClock, computes + reduce + step);
}

OrderPlan plan_orders(const Schedule& skeleton, const CostModel& model,
                      const OrderPlanOptions& options) {
  const Layout& layout = skeleton.layout;
  RECYCLE_ASSERT(options.memory_limit.size() == static_cast<std::size_t>(layout.pp),
                 "one memory limit per stage");
  RECYCLE_ASSERT(options.share.empty() || options.share.size() == options.memory_limit.size(),
                 "one base share per stage");
  const std::vector<std::int32_t> limit = chunk_limits(layout, options.memory_limit);
  const std::int64_t actions =
      3 * static_cast<std::int64_t>(layout.dp) * layout.virtual_stages() * layout.microbatches;
  const bool timed = actions <= options.timed_actions;
  // Step 4 ranks every candidate again; without it only the chosen one is needed, which a memo
  // may hold.
  const bool ranks_on_run =
      !model.cluster.free() && options.run.network != Network::kDirect && actions <= kSearchActions;
  CandidateMemo* memo = ranks_on_run ? nullptr : options.memo;
  if (memo != nullptr && memo->filled) {
    RECYCLE_ASSERT(memo->failed == skeleton.failed, "a candidate memo of another failure set");
    Candidate chosen{memo->workers, memo->estimate};
    if (options.search_work > 0 && actions <= kSearchActions)
      chosen = improve(skeleton, model, options, limit, std::move(chosen));
    return {std::move(chosen.workers), *chosen.estimate};
  }
  // Step 1: list schedules of the limit variants and look-aheads, on threads.
  std::vector<Variant> variants;
  if (timed) {
    for (const auto& variant : limit_variants(layout, options, limit)) {
      for (const auto& [weight_waits, forward_waits] :
           {std::pair{false, false}, std::pair{false, true}, std::pair{true, false},
            std::pair{true, true}}) {
        variants.push_back({variant, weight_waits, forward_waits});
      }
    }
  } else {
    variants = {{limit, false, false}, {limit, true, false}, {limit, true, true}};
    std::vector<std::int32_t> share = share_plus(layout, options, limit, 2);
    if (share != limit) variants.push_back({std::move(share), false, false});
  }
  const auto schedule_variant = [&](std::size_t i, Nanos give_up_at = kMaxClock) {
    return run_variant(skeleton, model, options, variants[i], give_up_at);
  };
  std::vector<Candidate> candidates;
  if (!timed) {
    // Timing a candidate over iterations costs more than its list schedule here: the candidates
    // are compared by their first iteration alone (the list schedule's makespan, which the
    // execution graph reproduces; it bounds the period from above), and the one chosen is timed.
    // The first two run in full; each later one gives up once it cannot end before the better
    // of them (the first wins ties, so a later one must end strictly before). The choice is the
    // same as running all in full, and on any number of threads.
    const std::size_t leading = std::min<std::size_t>(2, variants.size());
    std::vector<ListScheduleResult> results =
        parallel_map(leading, [&](std::size_t i) { return schedule_variant(i); });
    Nanos to_beat = kMaxClock;
    for (const ListScheduleResult& r : results) to_beat = std::min(to_beat, r.makespan);
    for (ListScheduleResult& r : parallel_map(variants.size() - leading, [&](std::size_t i) {
           return schedule_variant(leading + i, to_beat);
         })) {
      results.push_back(std::move(r));
    }
    std::size_t first = 0;
    for (std::size_t i = 1; i < results.size(); ++i) {
      if (!results[i].gave_up && results[i].makespan < results[first].makespan) first = i;
    }
    candidates.push_back(evaluate(skeleton, model, std::move(results[first].workers)));
  } else {
    candidates = parallel_map(variants.size(), [&](std::size_t i) {
      return evaluate(skeleton, model, schedule_variant(i).workers);
    });
  }
  if (layout.dp == 1 && skeleton.failed.empty()) {
    for (const std::vector<std::vector<Action>>& stages : options.fault_free_orders) {
      std::vector<WorkerSchedule> order = as_workers(stages);
      if (fits(order, limit)) candidates.push_back(evaluate(skeleton, model, std::move(order)));
    }
  }
  // Step 2: the best by (period, makespan), the first on ties.
  std::size_t best = 0;
  for (std::size_t i = 1; i < candidates.size(); ++i) {
    if (better(candidates[i], candidates[best])) best = i;
  }
  Candidate chosen = candidates[best];
  RECYCLE_ASSERT(chosen.estimate.has_value(), "every candidate order deadlocked");
  if (memo != nullptr) *memo = {true, skeleton.failed, chosen.workers, *chosen.estimate};
  // Step 3: the search, on small layouts.
  if (options.search_work > 0 && actions <= kSearchActions)
    chosen = improve(skeleton, model, options, limit, std::move(chosen));
  // Step 4: on a network that is not free, the ranking by the network the plan runs on.
  if (!ranks_on_run) return {std::move(chosen.workers), *chosen.estimate};
  const auto run = [&](std::vector<WorkerSchedule> workers) {
    Schedule s = skeleton;
    s.workers = std::move(workers);
    Candidate c;
    c.estimate = steady_state(s, model, options.run);
    c.workers = std::move(s.workers);
    return c;
  };
  Candidate ranked = run(std::move(chosen.workers));
  std::vector<Candidate> others =
      parallel_map(candidates.size(), [&](std::size_t i) { return run(candidates[i].workers); });
  for (Candidate& c : others) {
    if (better(c, ranked)) ranked = std::move(c);
  }
  RECYCLE_ASSERT(ranked.estimate.has_value(), "every candidate order deadlocked");
  return {std::move(ranked.workers), *ranked.estimate, true};
}

}  // namespace recycle::planner
