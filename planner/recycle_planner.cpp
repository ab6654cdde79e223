#include "planner/recycle_planner.hpp"

#include <algorithm>
#include <tuple>

#include "core/error.hpp"
#include "planner/failures.hpp"
#include "planner/list_scheduler.hpp"

namespace recycle::planner {

namespace {

std::size_t flat(const Layout& layout, std::int32_t dp, std::int32_t stage) {
  return static_cast<std::size_t>(dp) * static_cast<std::size_t>(layout.pp) + static_cast<std::size_t>(stage);
}

/// Shared by both planners: the layout check and the dead-stage answer.
std::optional<RecyclePlan> infeasible(const Layout& layout, const std::vector<WorkerId>& failed) {
  RECYCLE_ASSERT(layout.interleave == 1, "ReCycle plans need interleave 1");
  const std::int32_t dead = dead_stage(failed, layout);
  if (dead < 0) return std::nullopt;
  RecyclePlan plan;
  plan.dead_stage = dead;
  plan.reason = "stage " + std::to_string(dead) + " has no live worker: all " + std::to_string(layout.dp) +
                " of its data-parallel replicas have failed, so its micro-batches cannot be re-routed";
  return plan;
}

Schedule skeleton(const Layout& layout, const std::vector<WorkerId>& failed, std::string generator) {
  Schedule s;
  s.generator = std::move(generator);
  s.layout = layout;
  s.failed = failed;
  std::sort(s.failed.begin(), s.failed.end());
  s.routes = balanced_routes(layout, s.failed);
  return s;
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
  const CanonicalFailures canonical = canonicalize(options.failed, options.layout);
  const Schedule skel = skeleton(options.layout, canonical.failed, "recycle");
  const Costs costs = options.costs.virtual_stages.empty()
                          ? Costs::uniform(options.layout.virtual_stages(), {1, 1, 1})
                          : options.costs;
  const ListScheduleInput input{&skel, &costs, options.memory_limit.value_or(options.layout.pp),
                                options.defer_rerouted_w};
  Schedule planned = skel;
  planned.workers = list_schedule(input);
  RecyclePlan plan;
  plan.feasible = true;
  plan.schedule = relabel(planned, canonical.to_original);
  return plan;
}

RecyclePlan plan_naive_reroute(const Layout& layout, const std::vector<WorkerId>& failed) {
  if (auto no = infeasible(layout, failed)) return *no;
  Schedule schedule = skeleton(layout, failed, "1f1b");
  const RouteTable routes(schedule);
  std::vector<std::vector<Action>> tasks(static_cast<std::size_t>(layout.workers()));
  for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
    for (std::int32_t owner = 0; owner < layout.dp; ++owner) {
      for (std::int32_t s = 0; s < layout.pp; ++s) {
        tasks[flat(layout, routes.dp_of(owner, s, mb), s)].push_back({ActionType::kForward, s, mb, owner});
      }
    }
  }
  for (std::int32_t d = 0; d < layout.dp; ++d) {
    for (std::int32_t s = 0; s < layout.pp; ++s) {
      if (std::binary_search(schedule.failed.begin(), schedule.failed.end(), WorkerId{d, s})) continue;
      const auto& mine = tasks[flat(layout, d, s)];
      const auto n = static_cast<std::int32_t>(mine.size());
      const std::int32_t warmup = std::min(layout.pp - s - 1, n);
      const auto backward = [&](std::int32_t k) {
        Action a = mine[static_cast<std::size_t>(k)];
        a.type = ActionType::kBackward;
        return a;
      };
      WorkerSchedule worker{{d, s}, {}};
      for (std::int32_t k = 0; k < warmup; ++k) worker.actions.push_back(mine[static_cast<std::size_t>(k)]);
      for (std::int32_t k = 0; k < n - warmup; ++k) {
        worker.actions.push_back(mine[static_cast<std::size_t>(warmup + k)]);
        worker.actions.push_back(backward(k));
      }
      for (std::int32_t k = n - warmup; k < n; ++k) worker.actions.push_back(backward(k));
      schedule.workers.push_back(std::move(worker));
    }
  }
  RecyclePlan plan;
  plan.feasible = true;
  plan.schedule = std::move(schedule);
  return plan;
}

}  // namespace recycle::planner
