#include "planner/exact_formulations.hpp"

namespace recycle::planner::exact {

namespace {

/// The disjunctive formulation: a continuous start per action and one binary per pair of actions
/// on a worker (which runs first), with big-Ms from the time windows. Works for any costs.
class DisjunctiveModel {
 public:
  explicit DisjunctiveModel(const Problem& problem) : pr_(problem) {}

  /// Adds the model; returns each action's start, by action id.
  std::vector<Linear> build(LpBuilder& lp) {
    cmax_ = lp.add_col(pr_.lower_bound, pr_.makespan, 1, false, pr_.makespan);
    col_.assign(pr_.acts.size(), -1);
    std::vector<Linear> starts(pr_.acts.size());
    for (std::size_t n = 0; n < pr_.acts.size(); ++n) {
      const auto& a = pr_.acts[n];
      col_[n] = lp.add_col(a.head, pr_.latest(a, pr_.makespan), 0, false, a.start);
      starts[n] = {0, {{col_[n], 1}}};
    }
    add_precedence(lp);
    chain_of_.assign(pr_.acts.size(), {-1, -1});
    for (std::size_t c = 0; c < pr_.chains.size(); ++c) {
      const auto& chain = pr_.chains[c];
      for (std::size_t k = 0; k < chain.size(); ++k) {
        chain_of_[static_cast<std::size_t>(chain[k])] = {static_cast<std::int32_t>(c),
                                                         static_cast<std::int32_t>(k)};
      }
    }
    for (const auto& ids : pr_.on_worker) {
      const std::vector<Before> before = add_orders(lp, ids);
      add_load_cuts(lp, ids, before);
      add_memory(lp, ids, before);
    }
    return starts;
  }

 private:
  /// Whether one action runs before another on their worker: constant + coef * x[col], with at
  /// most one order binary (col -1: a constant).
  struct Before {
    double constant = 0;
    std::int32_t col = -1;
    double coef = 0;
  };

  [[nodiscard]] std::int32_t col(std::int32_t n) const { return col_[static_cast<std::size_t>(n)]; }

  /// Each task's data dependencies (Problem::precedence); the makespan after every W.
  void add_precedence(LpBuilder& lp) {
    for (const auto& [from, to] : pr_.precedence)
      lp.add_row({{col(to), 1}, {col(from), -1}}, pr_.act(from).duration, kInf);
    for (std::size_t n = 0; n < pr_.acts.size(); ++n) {
      const auto w = static_cast<std::int32_t>(n);
      if (w % kKinds != 2) continue;
      lp.add_row({{cmax_, 1}, {col(w), -1}}, pr_.act(w).duration, kInf);
    }
  }

  /// Orders every pair of actions on one worker: fixed when one task's chain, the route symmetry
  /// or the time windows decide it, else one binary. Returns the n x n matrix "i runs before j"
  /// over the worker's actions `ids`.
  std::vector<Before> add_orders(LpBuilder& lp, const std::vector<std::int32_t>& ids) {
    const std::size_t n = ids.size();
    std::vector<Before> before(n * n);
    const auto order = [&](std::size_t first, std::size_t second, bool row) {
      before[first * n + second] = {1, -1, 0};
      before[second * n + first] = {0, -1, 0};
      if (row)
        lp.add_row({{col(ids[second]), 1}, {col(ids[first]), -1}}, pr_.act(ids[first]).duration,
                   kInf);
    };
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = i + 1; j < n; ++j) {
        const auto& a = pr_.act(ids[i]);
        const auto& b = pr_.act(ids[j]);
        if (ids[i] / kKinds == ids[j] / kKinds) {  // one task: F, I, W, already chained
          order(i, j, false);
          continue;
        }
        const auto [chain_a, ka] = chain_of_[static_cast<std::size_t>(ids[i])];
        const auto [chain_b, kb] = chain_of_[static_cast<std::size_t>(ids[j])];
        if (chain_a >= 0 && chain_a == chain_b) {  // interchangeable: keep the chain's order
          ka < kb ? order(i, j, true) : order(j, i, true);
          continue;
        }
        const bool a_first = a.head + a.duration <= pr_.latest(b, pr_.makespan) + kEps;
        const bool b_first = b.head + b.duration <= pr_.latest(a, pr_.makespan) + kEps;
        RECYCLE_ASSERT(a_first || b_first, "the incumbent breaks its own time windows");
        if (!b_first || !a_first) {
          a_first ? order(i, j, true) : order(j, i, true);
          continue;
        }
        // y = 1: a before b. Each big-M is the most the other order could be violated by.
        const std::int32_t y = lp.add_col(0, 1, 0, true, a.position < b.position ? 1 : 0);
        const double m_ab = pr_.latest(a, pr_.makespan) + a.duration - b.head;
        const double m_ba = pr_.latest(b, pr_.makespan) + b.duration - a.head;
        lp.add_row({{col(ids[j]), 1}, {col(ids[i]), -1}, {y, -m_ab}}, a.duration - m_ab, kInf);
        lp.add_row({{col(ids[i]), 1}, {col(ids[j]), -1}, {y, m_ba}}, b.duration, kInf);
        before[i * n + j] = {0, y, 1};
        before[j * n + i] = {1, y, -1};
      }
    }
    return before;
  }

  /// Valid cuts that let the relaxation see a worker's load: whatever runs after an action ends
  /// by the makespan, whatever runs before it starts no earlier than the worker's first release.
  void add_load_cuts(LpBuilder& lp, const std::vector<std::int32_t>& ids,
                     const std::vector<Before>& before) {
    const std::size_t n = ids.size();
    double earliest = kInf;
    for (const std::int32_t id : ids) earliest = std::min(earliest, pr_.act(id).head);
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<LpBuilder::Term> tail{{cmax_, 1}, {col(ids[i]), -1}};
      std::vector<LpBuilder::Term> head{{col(ids[i]), 1}};
      double tail_rhs = pr_.act(ids[i]).duration;
      double head_rhs = earliest;
      for (std::size_t j = 0; j < n; ++j) {
        if (j == i) continue;
        const double d = pr_.act(ids[j]).duration;
        const Before& later = before[i * n + j];
        tail_rhs += d * later.constant;
        if (later.col >= 0) tail.push_back({later.col, -d * later.coef});
        const Before& earlier = before[j * n + i];
        head_rhs += d * earlier.constant;
        if (earlier.col >= 0) head.push_back({earlier.col, -d * earlier.coef});
      }
      lp.add_row(std::move(tail), tail_rhs, kInf);
      lp.add_row(std::move(head), head_rhs, kInf);
    }
  }

  /// When F(b) starts, the worker holds b and every other micro-batch a with F(a) before F(b)
  /// before W(a): 1 + sum_a [F(a) < F(b)] * [F(b) < W(a)] <= limit, each product linearized by a
  /// continuous z >= both orders - 1 wherever neither order is fixed.
  void add_memory(LpBuilder& lp, const std::vector<std::int32_t>& ids,
                  const std::vector<Before>& before) {
    const std::size_t n = ids.size();
    if (static_cast<std::int32_t>(n) / kKinds <= pr_.limit) return;
    const auto local = [&](std::int32_t id) {
      return static_cast<std::size_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
    };
    const auto value = [&](const Before& o) {
      return o.constant + (o.col >= 0 ? o.coef * lp.start(o.col) : 0);
    };
    for (std::size_t fb = 0; fb < n; ++fb) {
      if (pr_.act(ids[fb]).action.type != ActionType::kForward) continue;
      std::vector<LpBuilder::Term> row;
      double held = 1;
      for (std::size_t fa = 0; fa < n; ++fa) {
        if (fa == fb || pr_.act(ids[fa]).action.type != ActionType::kForward) continue;
        const Before& o1 = before[fa * n + fb];                  // F(a) before F(b)
        const Before& o2 = before[fb * n + local(ids[fa] + 2)];  // F(b) before W(a)
        if ((o1.col < 0 && o1.constant < 0.5) || (o2.col < 0 && o2.constant < 0.5)) continue;
        if (o1.col < 0 || o2.col < 0) {  // one order is certain: the term is the other one
          const Before& o = o1.col < 0 ? o2 : o1;
          held += o.constant;
          if (o.col >= 0) row.push_back({o.col, o.coef});
          continue;
        }
        const std::int32_t z = lp.add_col(0, 1, 0, false, std::max(0.0, value(o1) + value(o2) - 1));
        lp.add_row({{z, 1}, {o1.col, -o1.coef}, {o2.col, -o2.coef}}, o1.constant + o2.constant - 1,
                   kInf);
        row.push_back({z, 1});
      }
      if (row.empty()) {
        RECYCLE_ASSERT(held <= pr_.limit + kEps, "the incumbent breaks the memory limit");
        continue;
      }
      lp.add_row(std::move(row), -kInf, pr_.limit - held);
    }
  }

  const Problem& pr_;
  std::int32_t cmax_ = -1;
  std::vector<std::int32_t> col_;                                // start column by action id
  std::vector<std::pair<std::int32_t, std::int32_t>> chain_of_;  // symmetry chain and place, or -1
};

}  // namespace

/// Disjunctive, from above: minimize the makespan from the incumbent.
void solve_disjunctive(const Problem& pr, Clock::time_point deadline, ExactResult& out) {
  out.formulation = Formulation::kDisjunctive;
  LpBuilder lp;
  const std::vector<Linear> starts = DisjunctiveModel(pr).build(lp);
  out.binaries = lp.integers();
  // With whole-unit costs every makespan is a whole number of units: a bound within one unit of
  // the incumbent proves it optimal.
  const MilpOutcome found = solve_milp(lp, true, deadline, pr.integral ? 1 - kEps : 0);
  double bound = std::max(pr.lower_bound, found.bound);
  if (!found.solution.empty()) {
    out.schedule = extract(pr, starts, found.solution);
    out.objective = pr.to_nanos(found.objective);
  }
  if (found.status == MilpOutcome::Status::kSolved) {
    out.optimal = true;
    bound = found.objective;
  }
  if (pr.integral) bound = std::ceil(bound - kEps);
  out.lower_bound = pr.to_nanos(bound);
}

}  // namespace recycle::planner::exact
