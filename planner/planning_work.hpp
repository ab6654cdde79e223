// How much planning one command may do, estimated from the layout before any work starts, in
// chunks (planner/language/work_limits.hpp): a command that plans many schedules (a plan table, a
// degradation table) either runs within minutes of one core or is refused up front with the
// estimate and the limit (docs/cli.md, "Limits and what happens past them").
#pragma once

#include <cstdint>
#include <string>

#include "planner/language/schedule.hpp"
#include "planner/language/work_limits.hpp"

namespace recycle::planner {

/// Most planning work in one command, in chunks: 4x one schedule at the limit, a few minutes.
inline constexpr std::int64_t kMaxPlanningWork = std::int64_t{1} << 25;
/// What one plan small enough for the order search costs at least, in chunks: the search's
/// default budget (planner/candidates.hpp) takes about as long as planning that many chunks.
inline constexpr std::int64_t kSearchedPlanWork = std::int64_t{1} << 15;

/// The estimated work of planning one ReCycle schedule of `layout`, in chunks.
[[nodiscard]] std::int64_t plan_work(const Layout& layout) noexcept;

/// The most plans of `layout` one command may make: kMaxPlanningWork / plan_work(layout).
[[nodiscard]] std::int64_t max_plans(const Layout& layout) noexcept;

/// Refuses `plans` plans of `layout` when there are more than max_plans(layout): InputError naming
/// `flag` (what bounds the number of plans), saying what would be planned, the limit and `hint`.
void require_planning_work(std::int64_t plans, const Layout& layout, const std::string& flag,
                           const std::string& what, const std::string& hint = "");

}  // namespace recycle::planner
