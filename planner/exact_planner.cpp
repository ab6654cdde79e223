#include "planner/exact_planner.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <tuple>

#include "core/error.hpp"
#include "planner/exact_formulations.hpp"
#include "planner/generators.hpp"
#include "planner/language/semantics.hpp"
#include "planner/language/timing.hpp"
#include "planner/order_search.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/period.hpp"

namespace recycle::planner {

using exact::kEps;

namespace {

Costs checked_costs(const ExactOptions& options) {
  const Layout& layout = options.layout;
  Costs costs = options.costs.virtual_stages.empty()
                    ? Costs::uniform(layout.virtual_stages(), {1, 1, 1})
                    : options.costs;
  RECYCLE_ASSERT(static_cast<std::int32_t>(costs.virtual_stages.size()) >= layout.virtual_stages(),
                 "costs for fewer stages than the pipeline has");
  for (std::int32_t v = 0; v < layout.virtual_stages(); ++v) {
    const StageCost& c = costs.virtual_stages[static_cast<std::size_t>(v)];
    if (c.forward <= 0 || c.backward_input <= 0 || c.backward_weight <= 0) {
      throw InputError("--costs", "the exact planner needs positive F, I and W times; stage " +
                                      std::to_string(v) + " has a zero");
    }
  }
  return costs;
}

/// The most pairs of actions on one worker the disjunctive model orders, summed over the workers:
/// each is a binary and two rows (about 150 bytes); past this the model alone outgrows the memory
/// and time an exact solve can use, so the layout is refused before anything is built.
constexpr std::int64_t kMaxOrderPairs = 1'000'000;

std::int64_t pairs_of(std::int64_t n) {
  return n * (n - 1) / 2;
}

[[noreturn]] void refuse_size(std::int64_t pairs, bool at_least) {
  throw InputError("--exact", fmt::format("the exact planner orders {}{} pairs of actions on the "
                                          "workers here, past its limit of {}: it is for small "
                                          "layouts (fewer workers or micro-batches); the "
                                          "heuristic plans this one without --exact",
                                          at_least ? "at least " : "", pairs, kMaxOrderPairs));
}

}  // namespace

std::string_view formulation_name(Formulation formulation) noexcept {
  switch (formulation) {
    case Formulation::kAuto:
      return "auto";
    case Formulation::kTimeIndexed:
      return "time-indexed";
    case Formulation::kDisjunctive:
      return "disjunctive";
  }
  return "?";
}

ExactResult plan_exact(const ExactOptions& options) {
  const auto started = Clock::now();
  if (canonical_schedule_name(options.base) == "2bw") {
    // Its lists run two iterations' actions (the lag); the MILP orders one iteration's.
    throw InputError("--exact",
                     "the exact planner orders one iteration's F, I and W; a 2bw base lists "
                     "actions of two iterations at once, which it does not model: plan 2bw "
                     "without --exact");
  }
  const Costs costs = checked_costs(options);
  {
    // Before the heuristic plans: each live worker runs at least its own F, I and W of every
    // micro-batch on each of its chunks.
    const Layout& l = options.layout;
    const std::int64_t live =
        std::int64_t{l.workers()} - static_cast<std::int64_t>(options.failed.size());
    const std::int64_t pairs =
        std::max<std::int64_t>(live, 0) * pairs_of(3 * std::int64_t{l.microbatches} * l.interleave);
    if (pairs > kMaxOrderPairs) refuse_size(pairs, true);
  }
  const CostModel model = CostModel::compute_only(costs);
  const std::int32_t limit = options.memory_limit.value_or(options.layout.pp);
  RecycleOptions heuristic_options;
  heuristic_options.layout = options.layout;
  heuristic_options.base = options.base;
  heuristic_options.failed = options.failed;
  heuristic_options.model = model;
  heuristic_options.memory_limit = limit;
  heuristic_options.staggered_optimizer = options.staggered_optimizer;
  heuristic_options.search_work = options.search_work;
  const RecyclePlan heuristic = plan_recycle(heuristic_options);
  ExactResult result;
  if (!heuristic.feasible) {
    result.reason = heuristic.reason;
    return result;
  }
  const auto timeline = compute_timeline(heuristic.schedule, costs);
  RECYCLE_ASSERT(timeline.has_value(), "the heuristic's schedule deadlocks");
  result.feasible = true;
  result.heuristic_makespan = timeline->makespan;
  result.heuristic_period = heuristic.estimate.period;

  const auto chunks = static_cast<std::int32_t>(chunk_limit(limit, options.layout.interleave));
  const exact::Problem problem(
      heuristic.schedule, *timeline, costs, chunks,
      makespan_lower_bound(
          heuristic.schedule, costs,
          std::vector<std::int32_t>(static_cast<std::size_t>(options.layout.pp), chunks)));
  const auto deadline = started + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<Seconds>(options.time_limit));
  Formulation formulation = options.formulation;
  if (formulation == Formulation::kAuto) {
    formulation =
        exact::time_indexed_fits(problem) ? Formulation::kTimeIndexed : Formulation::kDisjunctive;
  }
  if (formulation == Formulation::kDisjunctive) {
    std::int64_t pairs = 0;
    for (const auto& ids : problem.on_worker)
      pairs += pairs_of(static_cast<std::int64_t>(ids.size()));
    if (pairs > kMaxOrderPairs) refuse_size(pairs, false);
  }
  if (formulation == Formulation::kTimeIndexed && !problem.integral) {
    throw InputError(
        "--exact",
        "the time-indexed formulation needs costs that are small multiples of one grain");
  }
  if (problem.lower_bound >= problem.makespan - kEps) {
    result.optimal = true;  // the incumbent meets a lower bound: nothing to solve
  } else if (formulation == Formulation::kTimeIndexed) {
    exact::solve_time_indexed(problem, deadline, result);
  } else {
    exact::solve_disjunctive(problem, deadline, result);
  }
  const bool from_milp = !result.schedule.workers.empty();
  if (!from_milp) result.schedule = heuristic.schedule;
  result.schedule.staggered_optimizer = options.staggered_optimizer;
  const auto exact_timeline = compute_timeline(result.schedule, costs);
  RECYCLE_ASSERT(exact_timeline.has_value(), "the exact schedule deadlocks");
  result.makespan = exact_timeline->makespan;
  if (from_milp) result.milp_makespan = result.makespan;
  const auto exact_period = direct_steady_state(result.schedule, model);
  RECYCLE_ASSERT(exact_period.has_value(), "the exact schedule deadlocks");
  result.period = exact_period->period;
  // The MILP minimizes the makespan; the plan is judged by (period, makespan): keep the
  // heuristic's when the MILP's is not better.
  if (std::tie(result.period, result.makespan) >
      std::tie(result.heuristic_period, result.heuristic_makespan)) {
    result.schedule = heuristic.schedule;
    result.makespan = result.heuristic_makespan;
    result.period = result.heuristic_period;
    if (result.objective > result.makespan) result.objective = result.makespan;
  }
  if (result.objective == 0) result.objective = result.makespan;
  if (result.optimal) result.lower_bound = std::min(result.objective, result.makespan);
  result.lower_bound = std::max(result.lower_bound, problem.to_nanos(problem.lower_bound));
  result.schedule.generator = "exact";
  result.solve_seconds = std::chrono::duration<Seconds>(Clock::now() - started).count();
  return result;
}

}  // namespace recycle::planner
