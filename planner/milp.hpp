// A solver-neutral MILP and its one adapter to CBC: the exact planner's formulations
// (planner/exact_formulations.hpp) build an LpBuilder and call solve_milp; every CBC call lives in
// milp.cpp. A solve runs in a child process (core/deadline.hpp) killed a quarter second after its
// deadline, since CBC's first LP solve never looks at the clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "core/units.hpp"

namespace recycle::planner {

/// A MILP: columns and rows collected first and handed to the solver at once (CBC's
/// Cbc_loadProblem; adding rows one by one copies the matrix each time). Each column carries its
/// value in the MIP start. Minimized.
class LpBuilder {
 public:
  struct Term {
    std::int32_t col = 0;
    double coef = 0;
  };

  std::int32_t add_col(double lb, double ub, double obj, bool integer, double start) {
    lb_.push_back(lb);
    ub_.push_back(ub);
    obj_.push_back(obj);
    integer_.push_back(integer ? 1 : 0);
    start_.push_back(start);
    return static_cast<std::int32_t>(lb_.size()) - 1;
  }

  void add_row(std::vector<Term> terms, double lo, double hi) {
    std::sort(terms.begin(), terms.end(), [](Term a, Term b) { return a.col < b.col; });
    const auto row = static_cast<std::int32_t>(row_lo_.size());
    for (std::size_t i = 0; i < terms.size(); ++i) {
      if (i > 0 && terms[i].col == terms[i - 1].col) {
        entries_.back().coef += terms[i].coef;
        continue;
      }
      entries_.push_back({terms[i].col, row, terms[i].coef});
    }
    row_lo_.push_back(lo);
    row_hi_.push_back(hi);
  }

  [[nodiscard]] double start(std::int32_t col) const {
    return start_[static_cast<std::size_t>(col)];
  }
  [[nodiscard]] std::int32_t integers() const {
    return static_cast<std::int32_t>(std::count(integer_.begin(), integer_.end(), 1));
  }

 private:
  friend class CbcLoader;  // milp.cpp: the one place the model meets CBC
  struct Entry {
    std::int32_t col = 0;
    std::int32_t row = 0;
    double coef = 0;
  };
  std::vector<double> lb_, ub_, obj_, start_;
  std::vector<char> integer_;
  std::vector<double> row_lo_, row_hi_;
  std::vector<Entry> entries_;
};

/// An action's start as constant + sum coef * column, to read it from a solution.
struct Linear {
  double constant = 0;
  std::vector<LpBuilder::Term> terms;

  [[nodiscard]] double value(const double* x) const {
    double v = constant;
    for (const auto& t : terms) v += t.coef * x[t.col];
    return v;
  }
};

/// What one solve found.
struct MilpOutcome {
  enum class Status { kSolved, kInfeasible, kStopped } status = Status::kStopped;
  std::vector<double> solution;  ///< the best one found; empty if none
  double objective = 0;
  double bound = 0;  ///< best possible objective
};

using Clock = std::chrono::steady_clock;

/// Seconds from now until `deadline` (negative past it).
[[nodiscard]] Seconds left(Clock::time_point deadline);

/// Solves `lp` (with `mip_start`: from its columns' start values) until `deadline`, stopping at a
/// absolute gap of `allowable_gap` between the best solution and the bound. Past the
/// deadline: kStopped with what was found, or nothing when the solving process had to be killed.
[[nodiscard]] MilpOutcome solve_milp(const LpBuilder& lp, bool mip_start,
                                     Clock::time_point deadline, double allowable_gap);

}  // namespace recycle::planner
