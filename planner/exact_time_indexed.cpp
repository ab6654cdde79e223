#include "planner/exact_formulations.hpp"

namespace recycle::planner::exact {

namespace {

/// Above this many binaries the time-indexed model is too big to build; the disjunctive one is
/// used instead.
constexpr std::int64_t kMaxTimeIndexedBinaries = 400'000;

/// The time-indexed formulation (step variables) of "is there a schedule that ends by
/// `horizon`?": z(a, t) = 1 when action a has started by whole time unit t, for t in its window.
/// Needs whole-unit costs (then some optimal schedule starts everything on whole units). Its
/// relaxation sees each worker's load over time, which the disjunctive big-Ms hide.
class TimeIndexedModel {
 public:
  TimeIndexedModel(const Problem& problem, std::int64_t horizon) : pr_(problem) {
    for (const auto& a : pr_.acts) {
      lo_.push_back(std::llround(a.head));
      hi_.push_back(std::llround(Problem::latest(a, static_cast<double>(horizon))));
    }
  }

  /// How many binaries the model has (one per action and whole unit of its window).
  [[nodiscard]] std::int64_t binaries() const {
    std::int64_t total = 0;
    for (std::size_t n = 0; n < lo_.size(); ++n)
      total += std::max<std::int64_t>(0, hi_[n] - lo_[n]);
    return total;
  }

  /// Adds the model; returns each action's start, by action id, or nothing when the windows
  /// alone rule the horizon out (then what was added is to be dropped).
  std::vector<Linear> build(LpBuilder& lp) {
    for (std::size_t n = 0; n < lo_.size(); ++n) {
      if (hi_[n] < lo_[n]) return {};
    }
    first_.assign(pr_.acts.size(), -1);
    std::vector<Linear> starts(pr_.acts.size());
    for (std::size_t n = 0; n < pr_.acts.size(); ++n) {
      starts[n].constant = static_cast<double>(hi_[n]);  // start = hi - sum of z over the window
      for (std::int64_t t = lo_[n]; t < hi_[n]; ++t) {
        const std::int32_t c = lp.add_col(0, 1, 0, true, 0);
        if (t == lo_[n]) first_[n] = c;
        if (t > lo_[n]) lp.add_row({{c - 1, 1}, {c, -1}}, -kInf, 0);  // started stays started
        starts[n].terms.push_back({c, -1});
      }
    }
    add_precedence(lp);
    for (const auto& ids : pr_.on_worker) {
      add_capacity(lp, ids);
      add_memory(lp, ids);
    }
    add_symmetry(lp);
    if (infeasible_) return {};
    return starts;
  }

 private:
  /// Adds coef * z(n, t) to `terms` (z is 0 before the window and 1 after it: those go to
  /// `constant`).
  void add(std::vector<LpBuilder::Term>& terms, double& constant, double coef, std::int32_t n,
           std::int64_t t) const {
    const auto i = static_cast<std::size_t>(n);
    if (t < lo_[i]) return;
    if (t >= hi_[i]) {
      constant += coef;
      return;
    }
    terms.push_back({first_[i] + static_cast<std::int32_t>(t - lo_[i]), coef});
  }
  [[nodiscard]] std::int64_t units(std::int32_t n) const {
    return std::llround(pr_.act(n).duration);
  }

  /// sum terms <= bound; with no terms left, a bound below zero means no schedule fits.
  void limit_row(LpBuilder& lp, std::vector<LpBuilder::Term> terms, double bound) {
    if (!terms.empty()) {
      lp.add_row(std::move(terms), -kInf, bound);
    } else if (bound < -kEps) {
      infeasible_ = true;
    }
  }

  /// started(b, t) <= started(a, t - gap) for every t in b's window.
  void started_before(LpBuilder& lp, std::int32_t a, std::int32_t b, std::int64_t gap) {
    const auto i = static_cast<std::size_t>(b);
    for (std::int64_t t = lo_[i]; t <= hi_[i]; ++t) {
      std::vector<LpBuilder::Term> terms;
      double constant = 0;
      add(terms, constant, 1, b, t);
      add(terms, constant, -1, a, t - gap);
      if (constant < -0.5) continue;  // a surely started by then
      limit_row(lp, std::move(terms), -constant);
    }
  }

  /// Each task's data dependencies (Problem::precedence), each after the one before ends.
  void add_precedence(LpBuilder& lp) {
    for (const auto& [from, to] : pr_.precedence) started_before(lp, from, to, units(from));
  }

  /// At most one action runs on a worker in each unit: sum of started(a, t) - started(a, t - p(a)).
  void add_capacity(LpBuilder& lp, const std::vector<std::int32_t>& ids) {
    std::int64_t from = std::numeric_limits<std::int64_t>::max();
    std::int64_t to = 0;
    for (const std::int32_t n : ids) {
      from = std::min(from, lo_[static_cast<std::size_t>(n)]);
      to = std::max(to, hi_[static_cast<std::size_t>(n)] + units(n));
    }
    for (std::int64_t t = from; t < to; ++t) {
      std::vector<LpBuilder::Term> terms;
      double constant = 0;
      for (const std::int32_t n : ids) {
        add(terms, constant, 1, n, t);
        add(terms, constant, -1, n, t - units(n));
      }
      limit_row(lp, std::move(terms), 1 - constant);
    }
  }

  /// Chunks held when unit t begins: Fs started by t minus Ws ended by t, at most limit.
  void add_memory(LpBuilder& lp, const std::vector<std::int32_t>& ids) {
    if (static_cast<std::int32_t>(ids.size()) / kKinds <= pr_.limit) return;
    std::int64_t from = std::numeric_limits<std::int64_t>::max();
    std::int64_t to = 0;
    for (const std::int32_t n : ids) {
      if (pr_.act(n).action.type != ActionType::kForward) continue;
      from = std::min(from, lo_[static_cast<std::size_t>(n)]);
      to = std::max(to, hi_[static_cast<std::size_t>(n)]);
    }
    for (std::int64_t t = from; t <= to; ++t) {
      std::vector<LpBuilder::Term> terms;
      double constant = 0;
      for (const std::int32_t n : ids) {
        const ActionType type = pr_.act(n).action.type;
        if (type == ActionType::kForward) add(terms, constant, 1, n, t);
        if (type == ActionType::kBackwardWeight) add(terms, constant, -1, n, t - units(n));
      }
      limit_row(lp, std::move(terms), pr_.limit - constant);
    }
  }

  /// Interchangeable tasks start in chain order: the later one started by t means the earlier
  /// one started by t - p (they share the stage-0 worker).
  void add_symmetry(LpBuilder& lp) {
    for (const auto& chain : pr_.chains) {
      for (std::size_t k = 1; k < chain.size(); ++k)
        started_before(lp, chain[k - 1], chain[k], units(chain[k - 1]));
    }
  }

  const Problem& pr_;
  std::vector<std::int64_t> lo_, hi_;  // window of each action's start, whole units
  std::vector<std::int32_t> first_;    // column of z(n, lo), by action id
  bool infeasible_ = false;            // a row without columns cannot hold
};

}  // namespace

bool time_indexed_fits(const Problem& pr) {
  return pr.integral &&
         TimeIndexedModel(pr, std::llround(pr.makespan) - 1).binaries() <= kMaxTimeIndexedBinaries;
}

/// Time-indexed, from below: is there a schedule ending by H, for H = lower bound, +1, ... up
/// to the incumbent's makespan? The first H that has one is optimal; each H that has none
/// raises the proven lower bound.
void solve_time_indexed(const Problem& pr, Clock::time_point deadline, ExactResult& out) {
  const auto incumbent = std::llround(pr.makespan);
  out.formulation = Formulation::kTimeIndexed;
  for (auto horizon = std::llround(pr.lower_bound); horizon < incumbent; ++horizon) {
    out.lower_bound = pr.to_nanos(static_cast<double>(horizon));  // every shorter one has none
    if (left(deadline) <= 0) return;
    LpBuilder lp;
    const std::vector<Linear> starts = TimeIndexedModel(pr, horizon).build(lp);
    if (starts.empty()) continue;  // an empty window: no schedule ends by this horizon
    out.binaries = std::max(out.binaries, lp.integers());
    const MilpOutcome found = solve_milp(lp, false, deadline, 0);
    if (found.status == MilpOutcome::Status::kStopped) return;
    if (found.status == MilpOutcome::Status::kInfeasible) continue;
    out.schedule = extract(pr, starts, found.solution);
    out.objective = out.lower_bound;
    out.optimal = true;
    return;
  }
  out.lower_bound = pr.to_nanos(pr.makespan);  // no shorter schedule: the incumbent is optimal
  out.optimal = true;
}

}  // namespace recycle::planner::exact
