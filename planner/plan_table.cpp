#include "planner/plan_table.hpp"

#include <algorithm>
#include <functional>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "planner/generators.hpp"
#include "planner/language/failures.hpp"
#include "planner/planning_work.hpp"

namespace recycle::planner {

namespace {

/// Calls `visit` with every size-k subset of [0, n) in lexicographic order.
void for_each_combination(std::int32_t n, std::int32_t k,
                          const std::function<void(const std::vector<std::int32_t>&)>& visit) {
  std::vector<std::int32_t> c(static_cast<std::size_t>(k));
  for (std::int32_t i = 0; i < k; ++i) c[static_cast<std::size_t>(i)] = i;
  while (true) {
    visit(c);
    std::int32_t i = k - 1;
    while (i >= 0 && c[static_cast<std::size_t>(i)] == n - k + i) --i;
    if (i < 0) return;
    ++c[static_cast<std::size_t>(i)];
    for (std::int32_t j = i + 1; j < k; ++j)
      c[static_cast<std::size_t>(j)] = c[static_cast<std::size_t>(j - 1)] + 1;
  }
}

}  // namespace

std::vector<std::vector<WorkerId>> canonical_failure_sets(const Layout& layout,
                                                          std::int32_t max_failures,
                                                          std::size_t max_sets) {
  // A canonical set gives pipeline 0, 1, ... non-empty sets of failed stages in canonical order:
  // sizes never grow, and sets of equal size never decrease lexicographically.
  std::vector<std::vector<WorkerId>> out;
  std::vector<std::int32_t> per_stage(static_cast<std::size_t>(layout.pp), 0);
  std::vector<WorkerId> current;
  std::function<void(std::int32_t, std::int32_t, const std::vector<std::int32_t>&)> extend =
      [&](std::int32_t pipeline, std::int32_t budget, const std::vector<std::int32_t>& previous) {
        if (out.size() >= max_sets) {
          throw InputError("--max-failures", "more than " + std::to_string(max_sets) +
                                                 " canonical failure sets to plan (each about " +
                                                 std::to_string(plan_work(layout)) +
                                                 " chunks of work; the limit is " +
                                                 std::to_string(kMaxPlanningWork) +
                                                 " in all); give a smaller bound");
        }
        out.push_back(current);
        if (pipeline >= layout.dp || budget == 0) return;
        const auto largest = std::min<std::int32_t>(
            budget, previous.empty() ? layout.pp : static_cast<std::int32_t>(previous.size()));
        for (std::int32_t k = largest; k >= 1; --k) {
          for_each_combination(layout.pp, k, [&](const std::vector<std::int32_t>& stages) {
            if (static_cast<std::int32_t>(previous.size()) == k && stages < previous) return;
            const bool kills = std::any_of(stages.begin(), stages.end(), [&](std::int32_t s) {
              return per_stage[static_cast<std::size_t>(s)] + 1 >= layout.dp;
            });
            if (kills) return;
            for (const std::int32_t s : stages) {
              ++per_stage[static_cast<std::size_t>(s)];
              current.push_back({pipeline, s});
            }
            extend(pipeline + 1, budget - k, stages);
            for (const std::int32_t s : stages) --per_stage[static_cast<std::size_t>(s)];
            current.resize(current.size() - stages.size());
          });
        }
      };
  extend(0, max_failures, {});
  for (auto& set : out) std::sort(set.begin(), set.end());
  return out;
}

PlanTable build_plan_table(const RecycleOptions& base, std::int32_t max_failures) {
  if (!base.model.cluster.pipelines_interchangeable()) {
    throw InputError("--profile",
                     "a plan table stores one plan per failure set up to relabelling the "
                     "pipelines, which needs each pipeline on whole nodes of its own: pp " +
                         std::to_string(base.layout.pp) + " x tensor parallel " +
                         std::to_string(base.model.cluster.tensor_parallel()) +
                         " GPUs is not a multiple of the " +
                         std::to_string(base.model.cluster.gpus_per_node()) + " GPUs per node");
  }
  PlanTable table;
  table.layout = base.layout;
  table.base = std::string(canonical_schedule_name(base.base));
  // No set of more than workers - pp failures leaves each stage a live replica: the table says
  // what it covers, which the reader bounds by the layout.
  table.max_failures = std::min(max_failures, base.layout.workers() - base.layout.pp);
  const std::vector<std::int32_t> limits = recycle_memory_limits(base);
  table.memory_limit = base.memory_limit.value_or(*std::max_element(limits.begin(), limits.end()));
  // Counted before any is planned: the sets stop at the most plans the work limit allows.
  const std::int64_t max_sets = max_plans(base.layout);
  const auto sets =
      canonical_failure_sets(base.layout, max_failures, static_cast<std::size_t>(max_sets));
  require_planning_work(static_cast<std::int64_t>(sets.size()), base.layout, "--max-failures",
                        "the plan table");
  auto plans = parallel_map(sets.size(), [&](std::size_t i) {
    RecycleOptions options = base;
    options.failed = sets[i];
    return plan_recycle(options);
  });
  for (std::size_t i = 0; i < sets.size(); ++i)
    table.plans.emplace(canonicalize(sets[i], base.layout).key, std::move(plans[i]));
  return table;
}

std::optional<RecyclePlan> lookup(const PlanTable& table, const std::vector<WorkerId>& failed) {
  const CanonicalFailures canonical = canonicalize(failed, table.layout);
  const auto it = table.plans.find(canonical.key);
  if (it == table.plans.end()) return std::nullopt;
  RecyclePlan plan = it->second;
  if (plan.feasible) plan.schedule = relabel(plan.schedule, canonical.to_original);
  return plan;
}

}  // namespace recycle::planner
