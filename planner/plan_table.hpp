// The plan table: ReCycle plans precomputed for every canonical failure set up to a bound, so a
// failure at run time costs a lookup, not a solve (DESIGN.md, "The ReCycle planner", step 4).
// Plans are stored in canonical labels (planner/language/failures.hpp); a lookup canonicalizes the
// failure set, finds its plan and relabels it back.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "planner/recycle_planner.hpp"

namespace recycle::planner {

struct PlanTable {
  Layout layout;
  std::string base = "1f1b";  ///< the schedule the plans are made on (RecycleOptions::base)
  std::int32_t max_failures = 0;
  std::int32_t memory_limit = 0;
  std::map<std::string, RecyclePlan> plans;  ///< canonical key -> plan in canonical labels
};

/// Every canonical failure set of 1..max_failures workers (plus the empty set) that leaves every
/// stage a live replica, in canonical form; fails with InputError naming --max-failures if there
/// are more than `max_sets`.
[[nodiscard]] std::vector<std::vector<WorkerId>> canonical_failure_sets(const Layout& layout,
                                                                        std::int32_t max_failures,
                                                                        std::size_t max_sets);

/// Plans every canonical failure set of up to `max_failures` workers, on the process's cores;
/// refuses with InputError naming --max-failures, before planning any, a table whose planning
/// work passes kMaxPlanningWork (planner/planning_work.hpp).
[[nodiscard]] PlanTable build_plan_table(const RecycleOptions& base, std::int32_t max_failures);

/// The plan for `failed` (original labels), or nullopt if the table does not hold its canonical
/// form.
[[nodiscard]] std::optional<RecyclePlan> lookup(const PlanTable& table,
                                                const std::vector<WorkerId>& failed);

}  // namespace recycle::planner
