#include "planner/recycle_planner.hpp"

#include <algorithm>
#include <tuple>

#include "core/error.hpp"
#include "planner/candidates.hpp"
#include "planner/generators.hpp"
#include "planner/language/failures.hpp"
#include "planner/language/semantics.hpp"
#include "planner/list_scheduler.hpp"
#include "planner/order_search.hpp"
#include "planner/recycle_two_bw.hpp"
#include "planner/timing/memory.hpp"

namespace recycle::planner {

namespace {

std::size_t flat(const Layout& layout, std::int32_t dp, std::int32_t stage) {
  return layout.index({dp, stage});
}

/// Shared by both planners: the dead-stage answer.
std::optional<RecyclePlan> infeasible(const Layout& layout, const std::vector<WorkerId>& failed) {
  const std::int32_t dead = dead_stage(failed, layout);
  if (dead < 0) return std::nullopt;
  RecyclePlan plan;
  plan.dead_stage = dead;
  plan.reason =
      "stage " + std::to_string(dead) + " has no live worker: all " + std::to_string(layout.dp) +
      " of its data-parallel replicas have failed, so its micro-batches cannot be re-routed";
  return plan;
}

Schedule skeleton(const Layout& layout, const std::vector<WorkerId>& failed, std::string generator,
                  const CostModel& model = {}) {
  Schedule s;
  s.generator = std::move(generator);
  s.layout = layout;
  s.failed = failed;
  std::sort(s.failed.begin(), s.failed.end());
  s.routes = balanced_routes(layout, s.failed, model);
  return s;
}

/// The base's own orders (planner/generators.hpp, base_orders), checked: InputError for a base
/// ReCycle does not plan on, or a layout it cannot run.
std::vector<std::vector<std::vector<Action>>> checked_base(const RecycleOptions& options) {
  const std::string_view base = canonical_schedule_name(options.base);
  const auto& names = recycle_base_names();
  if (std::find(names.begin(), names.end(), base) == names.end()) {
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    throw InputError("--base", "ReCycle plans on " + known + "; got '" + options.base + "'");
  }
  return base_orders(base, options.layout);
}

/// Per stage, the base's share of memory in chunks: its own peak, and at least 1F1B's pp - s
/// micro-batches (with fewer micro-batches than stages a base holds less than it may).
std::vector<std::int32_t> base_share(const Layout& layout,
                                     const std::vector<std::vector<Action>>& base) {
  std::vector<std::int32_t> share = held_peaks(base);
  for (std::int32_t s = 0; s < layout.pp; ++s) {
    auto& chunks = share[static_cast<std::size_t>(s)];
    chunks =
        std::max(chunks, static_cast<std::int32_t>(chunk_limit(layout.pp - s, layout.interleave)));
  }
  return share;
}

/// The memory limit when none is given: the base's share, in micro-batches (1F1B's: pp).
std::int32_t base_limit(const Layout& layout, const std::vector<std::int32_t>& share) {
  std::int32_t most = 1;
  for (const std::int32_t chunks : share)
    most = std::max(most, (chunks + layout.interleave - 1) / layout.interleave);
  return most;
}

/// Per stage, the micro-batches a plan may hold (recycle_memory_limits), for the base's `share`.
std::vector<std::int32_t> limits_for(const RecycleOptions& options,
                                     const std::vector<std::int32_t>& share) {
  return planning_limits(options.model, options.layout, options.memory_limit,
                         base_limit(options.layout, share), options.failed);
}

}  // namespace

const std::vector<std::string>& recycle_base_names() {
  static const std::vector<std::string> names = {"1f1b", "interleaved", "zb-v", "dualpipe-v",
                                                 "2bw"};
  return names;
}

std::string recycle_base_for(std::string_view schedule) {
  const std::string_view name = canonical_schedule_name(schedule);
  const auto& names = recycle_base_names();
  return std::find(names.begin(), names.end(), name) != names.end() ? std::string(name) : "1f1b";
}

std::vector<Route> balanced_routes(const Layout& layout, const std::vector<WorkerId>& failed,
                                   const CostModel& model) {
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
  // Where stage `stage` of the owner's micro-batch runs, as far as the routes made so far say
  // (stages are routed in ascending order, so a later failed stage is not known yet: -1).
  std::vector<std::int32_t> routed(down.size() * static_cast<std::size_t>(layout.microbatches), -1);
  const auto host = [&](std::int32_t owner, std::int32_t stage, std::int32_t mb) -> std::int32_t {
    if (stage < 0 || stage >= layout.pp) return -1;
    if (!down[flat(layout, owner, stage)]) return owner;
    return routed[flat(layout, owner, stage) * static_cast<std::size_t>(layout.microbatches) +
                  static_cast<std::size_t>(mb)];
  };
  // Moving the micro-batch's activations and gradients between peer (d, s) and the workers that
  // run its neighbouring stages.
  const auto transfers = [&](const WorkerId& f, std::int32_t mb, std::int32_t d) {
    Nanos t = 0;
    for (const std::int32_t s : {f.stage - 1, f.stage + 1}) {
      const std::int32_t h = host(f.dp, s, mb);
      if (h < 0) continue;
      const Bytes bytes = model.send_bytes({ActionType::kSendF, std::min(s, f.stage), mb, f.dp});
      t += 2 * model.cluster.transfer_time({h, s}, {d, f.stage}, bytes);
    }
    return t;
  };
  // With both neighbouring stages of the owner live, every micro-batch moves between the same
  // workers: each peer's transfers are worked out once per failed worker.
  std::vector<Nanos> same(static_cast<std::size_t>(layout.dp), 0);
  for (const WorkerId& f : order) {
    const bool fixed = (f.stage == 0 || !down[flat(layout, f.dp, f.stage - 1)]) &&
                       (f.stage + 1 == layout.pp || !down[flat(layout, f.dp, f.stage + 1)]);
    if (fixed) {
      for (std::int32_t d = 0; d < layout.dp; ++d) {
        if (!down[flat(layout, d, f.stage)]) same[static_cast<std::size_t>(d)] = transfers(f, 0, d);
      }
    }
    for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
      std::int32_t best = -1;
      std::tuple<std::int32_t, Nanos, std::int32_t, std::int32_t> best_key{};
      for (std::int32_t d = 0; d < layout.dp; ++d) {
        if (down[flat(layout, d, f.stage)]) continue;
        const std::tuple<std::int32_t, Nanos, std::int32_t, std::int32_t> key{
            load(d, f.stage), fixed ? same[static_cast<std::size_t>(d)] : transfers(f, mb, d),
            load(d, f.stage - 1) + load(d, f.stage + 1), d};
        if (best < 0 || key < best_key) {
          best = d;
          best_key = key;
        }
      }
      RECYCLE_ASSERT(best >= 0, "re-routing a stage with no live worker");
      ++extra[flat(layout, best, f.stage)];
      routed[flat(layout, f.dp, f.stage) * static_cast<std::size_t>(layout.microbatches) +
             static_cast<std::size_t>(mb)] = best;
      routes.push_back({f.dp, f.stage, mb, best});
    }
  }
  std::sort(routes.begin(), routes.end());
  return routes;
}

std::vector<std::int32_t> recycle_memory_limits(const RecycleOptions& options) {
  return limits_for(options, base_share(options.layout, checked_base(options).front()));
}

namespace {

/// What plan_recycle plans in: the failure set in its canonical labels, the cost model (uniform
/// costs when none are given) and the skeleton with the routes.
struct Setting {
  CanonicalFailures canonical;
  CostModel model;
  Schedule skeleton;
};

Setting setting(const RecycleOptions& options) {
  const Layout& layout = options.layout;
  Setting out{options.model.cluster.pipelines_interchangeable()
                  ? canonicalize(options.failed, layout)
                  : keep_labels(options.failed, layout),
              options.model,
              {}};
  if (out.model.compute.virtual_stages.empty())
    out.model.compute = Costs::uniform(layout.virtual_stages(), {1, 1, 1});
  out.skeleton = skeleton(layout, out.canonical.failed, "recycle", out.model);
  out.skeleton.staggered_optimizer = options.staggered_optimizer;
  return out;
}

/// The options of the order planner (planner/candidates.hpp) for a plan with failures.
OrderPlanOptions order_options(const RecycleOptions& options,
                               const std::vector<std::int32_t>& share) {
  OrderPlanOptions plan_options;
  plan_options.memory_limit = limits_for(options, share);
  plan_options.defer_rerouted_w = options.defer_rerouted_w;
  plan_options.share = share;
  plan_options.search_work = options.search_work;
  plan_options.timed_actions = options.timed_actions;
  plan_options.run = options.run;
  plan_options.memo = options.memo;
  return plan_options;
}

}  // namespace

RecyclePlan plan_recycle(const RecycleOptions& options) {
  std::vector<std::vector<std::vector<Action>>> base = checked_base(options);
  if (auto no = infeasible(options.layout, options.failed)) return *no;
  const Layout& layout = options.layout;
  Setting set = setting(options);
  const CanonicalFailures& canonical = set.canonical;
  const CostModel& model = set.model;
  Schedule& skel = set.skeleton;
  // Without failures every pipeline runs the same lists: plan one and copy it.
  const bool fault_free = canonical.failed.empty();
  const std::vector<std::int32_t> share = base_share(layout, base.front());
  if (canonical_schedule_name(options.base) == "2bw") {
    // Lists across iterations with two weight versions (planner/recycle_two_bw.hpp), against the
    // synchronous plan of the same routes (made on 1F1B, in these labels).
    RecycleOptions synchronous = options;
    synchronous.base = "1f1b";
    synchronous.failed = canonical.failed;
    synchronous.staggered_optimizer = true;
    RecyclePlan plan;
    plan.feasible = true;
    plan.schedule =
        relabel(plan_two_bw(skel, model, chunk_limits(layout, limits_for(options, share)),
                            plan_recycle(synchronous).schedule.workers),
                canonical.to_original);
    plan.estimate = *steady_state(plan.schedule, model, options.run);
    return plan;
  }
  if (fault_free) skel.layout.dp = 1;

  OrderPlanOptions plan_options = order_options(options, share);
  if (fault_free) plan_options.fault_free_orders = std::move(base);
  OrderPlan best = plan_orders(skel, model, plan_options);

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
  plan.estimate = best.estimate;
  // Timed as it will run: the lowering breaks ties between transfers by the order of the
  // workers, which relabelling changes, and a fault-free plan was made for one pipeline (whose
  // all-reduces, on a network that is not free, ring over every pipeline).
  if (best.ranked_on_run || (fault_free && layout.dp > 1 && !model.cluster.free()))
    plan.estimate = *steady_state(plan.schedule, model, options.run);
  return plan;
}

std::optional<Nanos> recycle_period_ceiling(const RecycleOptions& options) {
  const std::vector<std::vector<std::vector<Action>>> base = checked_base(options);
  if (infeasible(options.layout, options.failed) ||
      canonical_schedule_name(options.base) == "2bw" ||
      (options.run.network != Network::kDirect && !options.model.cluster.free())) {
    return std::nullopt;
  }
  const Setting set = setting(options);
  if (set.canonical.failed.empty()) return std::nullopt;
  return period_ceiling(set.skeleton, set.model,
                        order_options(options, base_share(options.layout, base.front())));
}

Nanos recycle_period_bound(const RecycleOptions& options) {
  RECYCLE_ASSERT(!infeasible(options.layout, options.failed), "every stage has a live worker");
  const Layout& layout = options.layout;
  CostModel model = options.model;
  if (model.compute.virtual_stages.empty())
    model.compute = Costs::uniform(layout.virtual_stages(), {1, 1, 1});
  Schedule skel = skeleton(layout, options.failed, "recycle", model);
  skel.staggered_optimizer = options.staggered_optimizer;
  if (canonical_schedule_name(options.base) == "2bw") skel.weight_versions = 2;
  return period_lower_bound(skel, model, chunk_limits(layout, recycle_memory_limits(options)));
}

RecyclePlan plan_naive_reroute(const Layout& layout, const std::vector<WorkerId>& failed) {
  // Plain 1F1B on every worker, re-routed micro-batches included: fused B before F, F while the
  // stage holds fewer than its 1F1B share (pp - s), nothing deferred.
  RECYCLE_ASSERT(layout.interleave == 1, "naive re-routing is planned on 1F1B");
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
