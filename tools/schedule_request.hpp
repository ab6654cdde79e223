// The flags that ask for a schedule by name, shared by `recycle plan` and `recycle simulate`:
// --schedule NAME, --fail DP:STAGE,..., --memory-limit K, --no-stagger, --plan-table FILE, --exact
// [--time-limit S].
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "planner/costs.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/schedule.hpp"

namespace recycle::tools {

struct ScheduleRequest {
  std::string name;                          ///< gpipe, 1f1b, interleaved, zb-h1, zb-h2, recycle
  std::string fail;                          ///< failed workers "DP:STAGE,..."
  std::optional<std::int32_t> memory_limit;  ///< micro-batches of activations per worker
  bool no_stagger = false;                   ///< recycle: keep the global optimizer barrier
  std::string plan_table;                    ///< recycle: look the plan up in this file
  bool exact = false;                        ///< recycle: solve the MILP with CBC
  double time_limit_s = 60;                  ///< for --exact

  /// Adds --schedule, --fail, --memory-limit, --no-stagger and --plan-table; returns the --schedule
  /// option.
  CLI::Option* add_to(CLI::App& app);

  /// The compute-only schedule asked for. nullopt with `why` set when no schedule exists (every
  /// replica of a stage failed); InputError for bad flags, and when a generated schedule holds
  /// more activations than --memory-limit.
  [[nodiscard]] std::optional<planner::Schedule> make(const planner::Layout& layout,
                                                      const planner::Costs& costs,
                                                      std::string& why) const;

 private:
  [[nodiscard]] planner::RecyclePlan solve_exact(const planner::Layout& layout,
                                                 const std::vector<planner::WorkerId>& failed,
                                                 const planner::Costs& costs,
                                                 std::string& why) const;
  [[nodiscard]] planner::RecyclePlan look_up(const planner::Layout& layout,
                                             const std::vector<planner::WorkerId>& failed,
                                             std::string& why) const;
};

}  // namespace recycle::tools
