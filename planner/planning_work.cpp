#include "planner/planning_work.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "planner/candidates.hpp"

namespace recycle::planner {

std::int64_t plan_work(const Layout& layout) noexcept {
  const std::int64_t n = chunks(layout);
  return 3 * n <= kSearchActions ? std::max(n, kSearchedPlanWork) : n;
}

std::int64_t max_plans(const Layout& layout) noexcept {
  return kMaxPlanningWork / plan_work(layout);
}

void require_planning_work(std::int64_t plans, const Layout& layout, const std::string& flag,
                           const std::string& what, const std::string& hint) {
  if (plans <= max_plans(layout)) return;
  const std::int64_t each = plan_work(layout);
  throw InputError(
      flag, fmt::format("{}: {} plans of about {} chunks of work each, {:.3g} in "
                        "all; the limit is {} chunks ({} such plans){}{}",
                        what, plans, each, static_cast<double>(plans) * each, kMaxPlanningWork,
                        max_plans(layout), hint.empty() ? "" : "; ", hint));
}

}  // namespace recycle::planner
