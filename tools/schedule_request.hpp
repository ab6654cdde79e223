// The flags that ask for a schedule by name, shared by `recycle plan` and `recycle simulate`:
// --schedule NAME, --fail DP:STAGE,..., --memory-limit K, --staggered-optimizer, --no-stagger,
// --plan-table FILE, --exact [--time-limit S].
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "planner/language/costs.hpp"
#include "planner/language/schedule.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/cost_model.hpp"

namespace recycle::tools {

struct ScheduleRequest {
  std::string name;                          ///< gpipe, 1f1b, interleaved, zb-h1, zb-h2, recycle
  std::string fail;                          ///< failed workers "DP:STAGE,..."
  std::optional<std::int32_t> memory_limit;  ///< micro-batches of activations per worker
  bool staggered = false;                    ///< every stage steps its optimizer on its own
  bool no_stagger = false;                   ///< recycle: keep the global optimizer barrier
  std::string plan_table;                    ///< recycle: look the plan up in this file
  bool exact = false;                        ///< recycle: solve the MILP with CBC
  double time_limit_s = 60;                  ///< for --exact
  std::string cost_source =
      "--costs";  ///< where the costs came from (--costs, --profile, a job file), for errors
  /// The job file the layout came from (its "parallel"), for errors; empty: the layout flags.
  std::string layout_source;

  /// Adds the flags; returns the --schedule option.
  CLI::Option* add_to(CLI::App& app);

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
