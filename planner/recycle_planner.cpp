#include "planner/recycle_planner.hpp"

#include <algorithm>
#include <future>
#include <tuple>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "planner/failures.hpp"
#include "planner/generators.hpp"
#include "planner/list_scheduler.hpp"
#include "planner/order_search.hpp"
#include "planner/timing.hpp"

namespace recycle::planner {

namespace {

constexpr std::int64_t kRandomStarts = 1000;  ///< at most, for the search
constexpr std::uint64_t kSearchSeed = 1;

std::size_t flat(const Layout& layout, std::int32_t dp, std::int32_t stage) {
  return static_cast<std::size_t>(dp) * static_cast<std::size_t>(layout.pp) +
         static_cast<std::size_t>(stage);
}

/// Shared by both planners: the layout check and the dead-stage answer.
std::optional<RecyclePlan> infeasible(const Layout& layout, const std::vector<WorkerId>& failed) {
  RECYCLE_ASSERT(layout.interleave == 1, "ReCycle plans need interleave 1");
  const std::int32_t dead = dead_stage(failed, layout);
  if (dead < 0) return std::nullopt;
  RecyclePlan plan;
  plan.dead_stage = dead;
  plan.reason =
      "stage " + std::to_string(dead) + " has no live worker: all " + std::to_string(layout.dp) +
      " of its data-parallel replicas have failed, so its micro-batches cannot be re-routed";
  return plan;
}

Schedule skeleton(const Layout& layout, const std::vector<WorkerId>& failed,
                  std::string generator) {
  Schedule s;
  s.generator = std::move(generator);
  s.layout = layout;
  s.failed = failed;
  std::sort(s.failed.begin(), s.failed.end());
  s.routes = balanced_routes(layout, s.failed);
  return s;
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

/// The search of planner/order_search.hpp from `base` and from list schedules with random
/// micro-batch ranks, best first; returns `base` when nothing is shorter.
ListScheduleResult improve(const Schedule& skel, const Costs& costs, std::int32_t limit,
                           bool defer_rerouted_w, std::int64_t work, ListScheduleResult base) {
  if (base.makespan <= makespan_lower_bound(skel, costs)) return base;  // nothing to gain
  const std::int64_t actions =
      3 * static_cast<std::int64_t>(skel.layout.dp) * skel.layout.pp * skel.layout.microbatches;
  // A list schedule costs about ten of the search's action visits per action; a quarter of the
  // work goes to the random starts.
  const std::int64_t randoms = std::min<std::int64_t>(kRandomStarts, work / 4 / (10 * actions));
  std::vector<ListScheduleResult> pool;
  pool.push_back(std::move(base));
  for (std::vector<std::int32_t>& rank : random_ranks(skel.layout, randoms)) {
    // Two in three with the limit on every stage, one in three with 1F1B's share, as above.
    std::vector<std::int32_t> limits = uniform_limit(skel.layout, limit);
    if (pool.size() % 3 == 2) {
      limits = one_f_one_b_limit(skel.layout);
      for (auto& l : limits) l = std::min(l, limit);
    }
    pool.push_back(list_schedule(
        {&skel, &costs, std::move(limits), defer_rerouted_w, false, false, std::move(rank)}));
  }
  std::stable_sort(pool.begin(), pool.end(),
                   [](const auto& a, const auto& b) { return a.makespan < b.makespan; });
  std::vector<std::vector<WorkerSchedule>> starts;
  for (ListScheduleResult& r : pool) starts.push_back(std::move(r.workers));
  const Nanos shortest = pool.front().makespan;
  OrderSearchResult found = search_orders(
      {&skel, &costs, uniform_limit(skel.layout, limit), work - randoms * 10 * actions}, starts);
  if (found.makespan < shortest) return {std::move(found.workers), found.makespan};
  return {std::move(starts.front()), shortest};
}

}  // namespace

std::vector<Route> balanced_routes(const Layout& layout, const std::vector<WorkerId>& failed) {
  std::vector<char> down(static_cast<std::size_t>(layout.workers()), 0);
  for (const WorkerId& w : failed) down[flat(layout, w.dp, w.stage)] = 1;
  std::vector<std::int32_t> extra(static_cast<std::size_t>(layout.workers()), 0);
  const auto load = [&](std::int32_t dp, std::int32_t stage) {
    if (stage < 0 || stage >= layout.pp) return 0;
    return extra[flat(layout, dp, stage)];
  };
  std::vector<WorkerId> order = failed;
  std::sort(order.begin(), order.end(), [](WorkerId a, WorkerId b) {
    return std::tie(a.stage, a.dp) < std::tie(b.stage, b.dp);
  });
  std::vector<Route> routes;
  routes.reserve(order.size() * static_cast<std::size_t>(layout.microbatches));
  for (const WorkerId& f : order) {
    for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
      std::int32_t best = -1;
      std::tuple<std::int32_t, std::int32_t, std::int32_t> best_key{};
      for (std::int32_t d = 0; d < layout.dp; ++d) {
        if (down[flat(layout, d, f.stage)]) continue;
        const std::tuple<std::int32_t, std::int32_t, std::int32_t> key{
            load(d, f.stage), load(d, f.stage - 1) + load(d, f.stage + 1), d};
        if (best < 0 || key < best_key) {
          best = d;
          best_key = key;
        }
      }
      RECYCLE_ASSERT(best >= 0, "re-routing a stage with no live worker");
      ++extra[flat(layout, best, f.stage)];
      routes.push_back({f.dp, f.stage, mb, best});
    }
  }
  std::sort(routes.begin(), routes.end());
  return routes;
}

RecyclePlan plan_recycle(const RecycleOptions& options) {
  if (auto no = infeasible(options.layout, options.failed)) return *no;
  const Layout& layout = options.layout;
  const CanonicalFailures canonical = canonicalize(options.failed, layout);
  const Costs costs = options.costs.virtual_stages.empty()
                          ? Costs::uniform(layout.virtual_stages(), {1, 1, 1})
                          : options.costs;
  const std::int32_t limit = options.memory_limit.value_or(layout.pp);
  // Without failures every pipeline runs the same lists: plan one and copy it.
  const bool fault_free = canonical.failed.empty();
  Schedule skel = skeleton(layout, canonical.failed, "recycle");
  if (fault_free) skel.layout.dp = 1;

  // Candidates, the shortest iteration wins (ties: the first): list scheduling with the memory
  // limit on every stage, and with 1F1B's per-stage share (pp - s) and two more, each capped by
  // the limit. The uniform limit is best on average; the tighter ones win where holding fewer
  // micro-batches lets gradients overtake forwards. They run on their own threads.
  std::vector<ListScheduleInput> candidates;
  candidates.push_back({&skel,
                        &costs,
                        uniform_limit(skel.layout, limit),
                        options.defer_rerouted_w,
                        false,
                        false,
                        {}});
  for (const std::int32_t extra : {0, 2}) {
    std::vector<std::int32_t> share = one_f_one_b_limit(skel.layout);
    for (auto& l : share) l = std::min(l + extra, limit);
    candidates.push_back(
        {&skel, &costs, std::move(share), options.defer_rerouted_w, false, false, {}});
  }
  std::vector<std::future<ListScheduleResult>> runs;
  for (const ListScheduleInput& input : candidates) {
    runs.push_back(std::async(std::launch::async, [&input] { return list_schedule(input); }));
  }
  ListScheduleResult best = runs[0].get();
  for (std::size_t i = 1; i < runs.size(); ++i) {
    ListScheduleResult r = runs[i].get();
    if (r.makespan < best.makespan) best = std::move(r);
  }
  if (fault_free) {
    // The fault-free orders compete too: 1F1B with its B split into I then W (never slower than
    // 1F1B itself: each gradient leaves before its W), and ZB-H1 when it fits the memory.
    // Both hold up to min(pp, m) micro-batches, on stage 0.
    const bool fits = std::min(layout.pp, layout.microbatches) <= limit;
    std::vector<Schedule> orders(fits ? 1 : 0, skel);
    for (std::int32_t s = 0; s < layout.pp && fits; ++s) {
      std::vector<Action> split;
      for (const Action& a : one_f_one_b_order(skel.layout, s)) {
        if (a.type != ActionType::kBackward) {
          split.push_back(a);
          continue;
        }
        split.push_back({ActionType::kBackwardInput, a.virtual_stage, a.microbatch, a.owner});
        split.push_back({ActionType::kBackwardWeight, a.virtual_stage, a.microbatch, a.owner});
      }
      orders[0].workers.push_back({{0, s}, std::move(split)});
    }
    if (fits) {
      orders.push_back(skel);
      for (std::int32_t s = 0; s < layout.pp; ++s)
        orders[1].workers.push_back({{0, s}, zb_h1_order(skel.layout, s)});
    }
    for (Schedule& order : orders) {
      const auto timeline = compute_timeline(order, costs);
      RECYCLE_ASSERT(timeline.has_value(), "a fault-free order deadlocked");
      if (timeline->makespan < best.makespan) best = {std::move(order.workers), timeline->makespan};
    }
  }
  const std::int64_t actions =
      3 * static_cast<std::int64_t>(skel.layout.dp) * layout.pp * layout.microbatches;
  if (options.search_work > 0 && actions <= kSearchActions) {
    best =
        improve(skel, costs, limit, options.defer_rerouted_w, options.search_work, std::move(best));
  }
  Schedule planned = skel;
  planned.workers = std::move(best.workers);
  if (fault_free) {
    planned.layout = layout;
    const std::vector<WorkerSchedule> pipeline = std::move(planned.workers);
    planned.workers.clear();
    for (std::int32_t d = 0; d < layout.dp; ++d) {
      for (WorkerSchedule w : pipeline) {
        w.id.dp = d;
        for (Action& a : w.actions) a.owner = d;
        planned.workers.push_back(std::move(w));
      }
    }
  }
  RecyclePlan plan;
  plan.feasible = true;
  plan.schedule = relabel(planned, canonical.to_original);
  return plan;
}

RecyclePlan plan_naive_reroute(const Layout& layout, const std::vector<WorkerId>& failed) {
  // Plain 1F1B on every worker, re-routed micro-batches included: fused B before F, F while the
  // stage holds fewer than its 1F1B share (pp - s), nothing deferred.
  if (auto no = infeasible(layout, failed)) return *no;
  const Schedule skel = skeleton(layout, failed, "1f1b");
  const Costs costs = Costs::uniform(layout.virtual_stages(), {1, 1, 1});
  const ListScheduleInput input{&skel, &costs, one_f_one_b_limit(layout), false, true, false, {}};
  RecyclePlan plan;
  plan.feasible = true;
  plan.schedule = skel;
  plan.schedule.workers = list_schedule(input).workers;
  return plan;
}

}  // namespace recycle::planner
