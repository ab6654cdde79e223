// The solver seam alone (planner/milp.hpp): a two-variable MILP whose optimum is worked out by
// hand, with and without a MIP start, and a proof of infeasibility.
#include <doctest/doctest.h>

#include <chrono>

#include "planner/milp.hpp"

namespace {

using namespace recycle::planner;

/// minimize -(2x + y) subject to x + 2y <= 4, 3x + y <= 6, x, y >= 0 integers. The LP optimum is
/// the corner x = 1.6, y = 1.2 (-4.4); among integer points (2, 0) gives -4, (1, 1) -3, (0, 2) -2,
/// and (2, 1) breaks 3x + y <= 6: the optimum is -4 at (2, 0).
LpBuilder two_variables(double start_x, double start_y) {
  LpBuilder lp;
  const std::int32_t x = lp.add_col(0, 10, -2, true, start_x);
  const std::int32_t y = lp.add_col(0, 10, -1, true, start_y);
  lp.add_row({{x, 1}, {y, 2}}, -1e30, 4);
  lp.add_row({{x, 3}, {y, 1}}, -1e30, 6);
  return lp;
}

Clock::time_point in(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

TEST_CASE("solve_milp: a two-variable MILP's hand optimum, with and without a MIP start") {
  for (const bool mip_start : {false, true}) {
    CAPTURE(mip_start);
    const LpBuilder lp = two_variables(1, 1);  // (1, 1): feasible, -3
    CHECK(lp.integers() == 2);
    const MilpOutcome out = solve_milp(lp, mip_start, in(30), 0);
    REQUIRE(out.status == MilpOutcome::Status::kSolved);
    REQUIRE(out.solution.size() == 2);
    CHECK(out.objective == doctest::Approx(-4));
    CHECK(out.solution[0] == doctest::Approx(2));
    CHECK(out.solution[1] == doctest::Approx(0));
    CHECK(out.bound == doctest::Approx(-4));
  }
}

TEST_CASE("solve_milp: an infeasible MILP is proven so") {
  LpBuilder lp;
  const std::int32_t x = lp.add_col(0, 1, 1, true, 0);
  lp.add_row({{x, 2}}, 1, 1);  // 2x = 1 has no integer solution in [0, 1]
  const MilpOutcome out = solve_milp(lp, false, in(30), 0);
  CHECK(out.status == MilpOutcome::Status::kInfeasible);
  CHECK(out.solution.empty());
}
