// The flags that ask for a schedule by name, shared by `recycle plan` and `recycle simulate`:
// --schedule NAME, --fail DP:STAGE,..., --memory-limit K, --staggered-optimizer, --no-stagger,
// --plan-table FILE, --exact [--time-limit S], --base NAME.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "planner/language/costs.hpp"
#include "planner/language/schedule.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/cost_model.hpp"
#include "profiles/job.hpp"

namespace recycle::tools {

/// Adds --base NAME (the schedule ReCycle plans on) to `app`, for plan, simulate, degradation and
/// plan-table alike.
CLI::Option* add_base_option(CLI::App& app, std::string& base);

struct ScheduleRequest {
  std::string name;                          ///< gpipe, 1f1b, interleaved, zb-h1, zb-h2, recycle
  std::string fail;                          ///< failed workers "DP:STAGE,..."
  std::optional<std::int32_t> memory_limit;  ///< micro-batches of activations per worker
  bool staggered = false;                    ///< every stage steps its optimizer on its own
  bool no_stagger = false;                   ///< recycle: keep the global optimizer barrier
  std::string plan_table;                    ///< recycle: look the plan up in this file
  bool exact = false;                        ///< recycle: solve the MILP with CBC
  double time_limit_s = 60;                  ///< for --exact
  /// recycle: the fault-free schedule it plans on (planner::recycle_base_names); empty: a job's
  /// own schedule when it is one of them, else 1f1b.
  std::string base;
  std::string cost_source =
      "--costs";  ///< where the costs came from (--costs, --profile, a job file), for errors
  /// The job file the layout came from (its "parallel"), for errors; empty: the layout flags.
  std::string layout_source;

  /// Adds the flags; returns the --schedule option.
  CLI::Option* add_to(CLI::App& app);

  /// Fills what the flags left to the job `job` (may be null): --schedule is the job's schedule,
  /// and recycle's base the job's schedule when ReCycle plans on it. InputError naming --base
  /// when it is given for another schedule than recycle.
  void settle(const profiles::Job* job);
  /// The schedule whose layout this request runs on (planner::layout_for): recycle's base, or the
  /// schedule itself.
  [[nodiscard]] std::string placed_by() const;

  /// The optimizer mode asked for: recycle staggers unless --no-stagger, the others keep the
  /// barrier unless --staggered-optimizer.
  [[nodiscard]] bool staggered_optimizer() const;

  /// The compute-only schedule asked for, planned against `model` for the optimizer mode asked
  /// for and for running as `run` says. nullopt with `why` set when no schedule exists (every
  /// replica of a stage failed); InputError for bad flags, and when a generated schedule holds more
  /// activations than --memory-limit. A layout the schedule cannot run on is named as it was given:
  /// --interleave, or the job file's parallel.interleave (layout_source).
  [[nodiscard]] std::optional<planner::Schedule> make(const planner::Layout& layout,
                                                      const planner::CostModel& model,
                                                      const planner::RunOptions& run,
                                                      std::string& why) const;

 private:
  [[nodiscard]] std::optional<planner::Schedule> generate(const planner::Layout& layout,
                                                          const planner::CostModel& model,
                                                          const planner::RunOptions& run,
                                                          std::string& why) const;
  [[nodiscard]] planner::RecyclePlan solve_exact(const planner::Layout& layout,
                                                 const std::vector<planner::WorkerId>& failed,
                                                 const planner::CostModel& model,
                                                 std::string& why) const;
  [[nodiscard]] planner::RecyclePlan look_up(const planner::Layout& layout,
                                             const std::vector<planner::WorkerId>& failed,
                                             std::string& why) const;
};

}  // namespace recycle::tools
