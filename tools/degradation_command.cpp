// recycle degradation: how the iteration time grows with the number of failed workers, for
// ReCycle's adaptive plans on a base schedule against the base without failures, the naive
// re-route (on a 1F1B base) and the fault-free bound (docs/recycle.md).
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "planner/generators.hpp"
#include "planner/planning_work.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/memory.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "tools/command.hpp"
#include "tools/layout_options.hpp"
#include "tools/schedule_request.hpp"
#include "tools/whole_range.hpp"

namespace recycle::tools {

namespace {

struct DegradationOptions {
  LayoutOptions layout;
  std::string base;  ///< the schedule ReCycle plans on; empty: the job's (recycle_base_for), 1f1b
  std::int32_t stage = -1;  ///< the stage for the one-stage pattern; default pp / 2
  std::optional<std::int32_t> memory_limit;  ///< micro-batches per worker; default pp
  std::optional<std::int32_t> max_failures;  ///< the last row's failures; default dp - 1
  bool json = false;
  std::string output = "-";
};

/// The failure patterns: k workers of one stage, or k workers spread over distinct pipelines and
/// stages (failure i on worker (i, i mod pp)).
std::vector<planner::WorkerId> pattern(const std::string& kind, std::int32_t k, std::int32_t stage,
                                       const planner::Layout& layout) {
  std::vector<planner::WorkerId> failed;
  for (std::int32_t i = 0; i < k; ++i) {
    failed.push_back(kind == "one stage" ? planner::WorkerId{i, stage}
                                         : planner::WorkerId{i, i % layout.pp});
  }
  std::sort(failed.begin(), failed.end());
  return failed;
}

struct Row {
  std::string pattern;
  std::int32_t failures = 0;
  Nanos recycle = 0;          ///< planned for and run with the staggered optimizer
  Nanos recycle_barrier = 0;  ///< planned for and run with the optimizer barrier
  /// none when the naive re-route does not fit the workers' memory, or the base is not 1F1B
  std::optional<Nanos> naive;
  Nanos bound = 0;        ///< total work / live workers
  Nanos stage_bound = 0;  ///< max over stages of the stage's work / its live workers
};

int run_degradation(const DegradationOptions& o) {
  // ReCycle plans on the base, and the naive re-route on 1F1B: the job is timed as the base.
  const profiles::Job* job = o.layout.loaded_job();
  const std::string base = !o.base.empty()  ? o.base
                           : job != nullptr ? planner::recycle_base_for(job->schedule)
                                            : "1f1b";
  const RunModel on = o.layout.resolve(base);
  const planner::Layout& layout = on.layout;
  const bool one_f_one_b = planner::canonical_schedule_name(base) == "1f1b";
  const std::int32_t stage = o.stage < 0 ? layout.pp / 2 : o.stage;
  if (stage >= layout.pp)
    throw InputError("--stage", "expected a stage below --pp (" + std::to_string(layout.pp) + ")");
  const std::int32_t max_failures = o.max_failures.value_or(layout.dp - 1);
  if (max_failures >= layout.dp) {
    throw InputError("--max-failures",
                     "expected at most dp - 1 = " + std::to_string(layout.dp - 1) +
                         " (more would leave a stage no live worker)");
  }
  // Each row plans ReCycle twice (staggered, barrier) and the naive re-route, and runs all three.
  const std::int64_t fits = (planner::max_plans(layout) / 3 - 1) / 2;
  planner::require_planning_work(
      3 * (2 * std::int64_t{max_failures} + 1), layout, "--max-failures",
      fmt::format("{} rows up to {} failures", 2 * max_failures + 1, max_failures),
      fits >= 0 ? fmt::format("give --max-failures {} or less", fits) : "a smaller layout");
  const planner::CostModel& model = on.model;
  const planner::Costs& costs = model.compute;
  // What ReCycle plans for: the given limit, or the base's share, lowered on each stage to what
  // fits (the planner's own rule); checks the base's name and layout.
  planner::RecycleOptions planning;
  planning.layout = layout;
  planning.base = base;
  planning.model = model;
  planning.memory_limit = o.memory_limit;
  const std::vector<std::int32_t> limits = planner::recycle_memory_limits(planning);
  // The base without failures, as the job runs it (the optimizer barrier).
  planner::GeneratorOptions generator;
  generator.layout = layout;
  generator.model = model;
  planner::Schedule fault_free_base;
  try {
    fault_free_base = planner::generate_fault_free(base, generator);
  } catch (const InputError& e) {
    if (e.where() != "--schedule") throw;
    throw InputError("--base", e.problem());
  }
  planner::check_memory(fault_free_base, model, o.layout.cost_source());
  const std::int32_t least = *std::min_element(limits.begin(), limits.end());
  const bool uneven = std::any_of(limits.begin(), limits.end(), [&](auto l) { return l != least; });
  const auto iteration = [&](planner::Schedule schedule) {
    sim::SimOptions options;
    options.staggered_optimizer = schedule.staggered_optimizer;
    return sim::compute_metrics(sim::simulate(std::move(schedule), model, options)).iteration_time;
  };
  // Every micro-batch of every pipeline is computed once per iteration, whatever fails.
  std::vector<Nanos> stage_work(static_cast<std::size_t>(layout.pp), 0);
  for (std::int32_t v = 0; v < layout.virtual_stages(); ++v) {
    const auto& c = costs.virtual_stages[static_cast<std::size_t>(v)];
    Nanos& w = stage_work[static_cast<std::size_t>(layout.stage_of(v))];
    // Saturating: costs of up to 1e6 s times many micro-batches pass the clock, which the
    // timing below refuses with its own error.
    w = std::min(
        kMaxClock,
        w + clock_times(clock_times(c.forward + c.backward_input + c.backward_weight, layout.dp),
                        layout.microbatches));
  }
  Nanos work = 0;
  for (const Nanos w : stage_work) work = std::min(kMaxClock, work + w);

  std::vector<Row> rows;
  for (const std::string kind : {"one stage", "spread"}) {
    for (std::int32_t k = 0; k <= max_failures; ++k) {
      if (kind == "spread" && k == 0) continue;
      planner::RecycleOptions options = planning;
      options.failed = pattern(kind, k, stage, layout);
      const planner::RecyclePlan plan = planner::plan_recycle(options);
      options.staggered_optimizer = false;
      const planner::RecyclePlan barrier = planner::plan_recycle(options);
      // A naive re-route that piles more micro-batches on a survivor than fit is a row without
      // it; on another base than 1F1B there is none.
      std::optional<Nanos> naive;
      if (one_f_one_b) {
        const planner::RecyclePlan n = planner::plan_naive_reroute(layout, options.failed);
        if (model.worker_memory <= 0 ||
            std::ranges::all_of(planner::peak_memory(n.schedule, model),
                                [&](Bytes peak) { return peak <= model.worker_memory; }))
          naive = iteration(n.schedule);
      }
      const auto live = static_cast<Nanos>(layout.workers()) - k;
      Nanos stage_bound = 0;
      for (std::int32_t s = 0; s < layout.pp; ++s) {
        const auto down = std::count_if(options.failed.begin(), options.failed.end(),
                                        [&](const planner::WorkerId& w) { return w.stage == s; });
        const auto alive = static_cast<Nanos>(layout.dp - down);
        stage_bound =
            std::max(stage_bound, (stage_work[static_cast<std::size_t>(s)] + alive - 1) / alive);
      }
      rows.push_back({kind, k, iteration(plan.schedule), iteration(barrier.schedule), naive,
                      (work + live - 1) / live, stage_bound});
    }
  }
  const Nanos fault_free = iteration(fault_free_base);
  o.layout.require_time(fault_free);

  std::string out;
  if (o.json) {
    nlohmann::ordered_json j;
    j["layout"] = {{"dp", layout.dp},
                   {"pp", layout.pp},
                   {"microbatches", layout.microbatches},
                   {"interleave", layout.interleave},
                   {"placement", planner::placement_name(layout.placement)}};
    j["base"] = fault_free_base.generator;
    j["memory_limit"] = least;
    j["memory_limits"] = limits;
    j["fault_free_s"] = to_seconds(fault_free);
    j["rows"] = nlohmann::ordered_json::array();
    for (const Row& r : rows) {
      j["rows"].push_back({{"pattern", r.pattern},
                           {"failures", r.failures},
                           {"recycle_s", to_seconds(r.recycle)},
                           {"recycle_barrier_s", to_seconds(r.recycle_barrier)},
                           {"naive_s", r.naive ? nlohmann::ordered_json(to_seconds(*r.naive))
                                               : nlohmann::ordered_json(nullptr)},
                           {"bound_s", to_seconds(r.bound)},
                           {"stage_bound_s", to_seconds(r.stage_bound)},
                           {"recycle_vs_fault_free",
                            static_cast<double>(r.recycle) / static_cast<double>(fault_free)}});
    }
    out = j.dump(2) + "\n";
  } else {
    out = fmt::format(
        "dp {} x pp {}{}, {} micro-batches; fault-free {} iteration {:g} s; one-stage failures on "
        "stage {}; ReCycle memory limit {} micro-batches\n",
        layout.dp, layout.pp,
        layout.interleave > 1 ? fmt::format(" x {} chunks", layout.interleave) : std::string(),
        layout.microbatches, fault_free_base.generator, to_seconds(fault_free), stage,
        uneven ? fmt::format("{} (stages 0..{}: what fits in memory)", fmt::join(limits, ", "),
                             layout.pp - 1)
               : std::to_string(least));
    out += fmt::format("{:<10} {:>8} {:>12} {:>12} {:>12} {:>12} {:>12} {:>14}\n", "pattern",
                       "failures", "recycle (s)", "no stagger", "naive (s)", "bound (s)",
                       "stage bound", "recycle/base");
    for (const Row& r : rows) {
      const std::string naive = r.naive       ? fmt::format("{:.6g}", to_seconds(*r.naive))
                                : one_f_one_b ? std::string("no fit")
                                              : std::string("-");
      out +=
          fmt::format("{:<10} {:>8} {:>12.6g} {:>12.6g} {:>12} {:>12.6g} {:>12.6g} {:>14.3f}\n",
                      r.pattern, r.failures, to_seconds(r.recycle), to_seconds(r.recycle_barrier),
                      naive, to_seconds(r.bound), to_seconds(r.stage_bound),
                      static_cast<double>(r.recycle) / static_cast<double>(fault_free));
    }
  }
  write_text_file(o.output, out);
  return kExitOk;
}

}  // namespace

Command add_degradation_command(CLI::App& app) {
  auto o = std::make_shared<DegradationOptions>();
  CLI::App* sub = app.add_subcommand("degradation",
                                     "Iteration time as failures grow: ReCycle against the naive "
                                     "re-route and the fault-free bound");
  o->layout.add_to(*sub);
  add_base_option(*sub, o->base);
  sub->add_option("--stage", o->stage, "Stage of the one-stage failure pattern (default pp / 2)")
      ->check(whole_range(0, planner::kMaxPp - 1));
  sub->add_option("--memory-limit", o->memory_limit,
                  "Most micro-batches of activations a ReCycle worker may hold (default: the "
                  "base's peak, at least pp)")
      ->check(whole_range(1, planner::kMaxMicrobatches));
  sub->add_option("--max-failures", o->max_failures,
                  "Rows up to K failed workers (default dp - 1, every row)")
      ->check(whole_range(0, planner::kMaxDp - 1));
  sub->add_flag("--json", o->json, "Print JSON instead of a table");
  add_output(*sub, "-o,--output", o->output, "Write to FILE instead of stdout");
  sub->footer(examples({
      "recycle degradation --pp 8 --dp 8 --microbatches 8 --costs 1,1,1",
      "recycle degradation --pp 8 --dp 8 --microbatches 8 --costs 1,1,1 --memory-limit 16",
      "recycle degradation --pp 4 --dp 4 --microbatches 8 --costs 1,1,1 --base zb-v",
      "recycle degradation --pp 4 --dp 4 --microbatches 8 --interleave 2 --costs 1,1,1 --base "
      "interleaved",
      "recycle degradation --pp 4 --dp 4 --microbatches 8 --profile profile.json --json",
      "recycle degradation --job job.json",
      "recycle degradation --pp 16 --dp 256 --microbatches 32 --costs 1,1,1 --max-failures 8",
  }));
  return {sub, [o] { return run_degradation(*o); }};
}

}  // namespace recycle::tools
