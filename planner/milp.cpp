#include "planner/milp.hpp"

#include <Cbc_C_Interface.h>

#include <cstring>
#include <memory>
#include <numeric>
#include <string>

#include "core/deadline.hpp"
#include "core/error.hpp"

namespace recycle::planner {

namespace {

struct CbcDeleter {
  void operator()(Cbc_Model* model) const noexcept { Cbc_deleteModel(model); }
};
using CbcModel = std::unique_ptr<Cbc_Model, CbcDeleter>;

}  // namespace

class CbcLoader {
 public:
  /// The model; with `mip_start`, the columns' start values go to CBC as its first solution.
  static CbcModel load(const LpBuilder& lp, bool mip_start) {
    std::vector<LpBuilder::Entry> sorted = lp.entries_;
    std::stable_sort(
        sorted.begin(), sorted.end(),
        [](const LpBuilder::Entry& a, const LpBuilder::Entry& b) { return a.col < b.col; });
    const std::size_t cols = lp.lb_.size();
    std::vector<CoinBigIndex> starts(cols + 1, 0);
    std::vector<int> rows;
    std::vector<double> values;
    rows.reserve(sorted.size());
    values.reserve(sorted.size());
    for (const LpBuilder::Entry& e : sorted) {
      ++starts[static_cast<std::size_t>(e.col) + 1];
      rows.push_back(e.row);
      values.push_back(e.coef);
    }
    std::partial_sum(starts.begin(), starts.end(), starts.begin());
    CbcModel model(Cbc_newModel());
    Cbc_loadProblem(model.get(), static_cast<int>(cols), static_cast<int>(lp.row_lo_.size()),
                    starts.data(), rows.data(), values.data(), lp.lb_.data(), lp.ub_.data(),
                    lp.obj_.data(), lp.row_lo_.data(), lp.row_hi_.data());
    Cbc_setObjSense(model.get(), 1);
    std::vector<int> all(cols);
    std::iota(all.begin(), all.end(), 0);
    for (std::size_t c = 0; c < cols; ++c) {
      if (lp.integer_[c]) Cbc_setInteger(model.get(), static_cast<int>(c));
    }
    if (mip_start)
      Cbc_setMIPStartI(model.get(), static_cast<int>(cols), all.data(), lp.start_.data());
    return model;
  }
};

namespace {

MilpOutcome solve_cbc(const LpBuilder& lp, bool mip_start, Seconds seconds, double allowable_gap) {
  const CbcModel model = CbcLoader::load(lp, mip_start);
  Cbc_setLogLevel(model.get(), 0);
  Cbc_setParameter(model.get(), "timeMode", "elapsed");
  // Clp's presolve can spin for many minutes on the time-indexed relaxation, and no time limit
  // reaches it there.
  Cbc_setParameter(model.get(), "presolve", "off");
  Cbc_setMaximumSeconds(model.get(), std::max(seconds, 0.01));
  Cbc_setAllowableGap(model.get(), allowable_gap);
  Cbc_solve(model.get());
  MilpOutcome out;
  out.bound = Cbc_getBestPossibleObjValue(model.get());
  if (const double* best = Cbc_bestSolution(model.get())) {
    out.solution.assign(best, best + Cbc_getNumCols(model.get()));
    out.objective = Cbc_getObjValue(model.get());
  }
  if (Cbc_isProvenOptimal(model.get()) && !out.solution.empty()) {
    out.status = MilpOutcome::Status::kSolved;
  } else if (Cbc_isProvenInfeasible(model.get())) {
    out.status = MilpOutcome::Status::kInfeasible;
  }
  return out;
}

/// The outcome as bytes, to cross from the solving process: status, objective, bound, solution.
std::string encode(const MilpOutcome& o) {
  std::string out;
  const auto put = [&](const void* p, std::size_t n) {
    if (n > 0) out.append(static_cast<const char*>(p), n);
  };
  const auto status = static_cast<std::int32_t>(o.status);
  const auto n = static_cast<std::uint64_t>(o.solution.size());
  put(&status, sizeof status);
  put(&o.objective, sizeof o.objective);
  put(&o.bound, sizeof o.bound);
  put(&n, sizeof n);
  put(o.solution.data(), o.solution.size() * sizeof(double));
  return out;
}

MilpOutcome decode(const std::string& bytes) {
  MilpOutcome o;
  std::size_t at = 0;
  const auto get = [&](void* p, std::size_t n) {
    RECYCLE_ASSERT(at + n <= bytes.size(), "a short answer from the solving process");
    if (n > 0) std::memcpy(p, bytes.data() + at, n);  // an empty solution has no data()
    at += n;
  };
  std::int32_t status = 0;
  std::uint64_t n = 0;
  get(&status, sizeof status);
  get(&o.objective, sizeof o.objective);
  get(&o.bound, sizeof o.bound);
  get(&n, sizeof n);
  RECYCLE_ASSERT(n <= bytes.size() / sizeof(double), "a short answer from the solving process");
  o.solution.resize(static_cast<std::size_t>(n));
  get(o.solution.data(), o.solution.size() * sizeof(double));
  o.status = static_cast<MilpOutcome::Status>(status);
  return o;
}

}  // namespace

Seconds left(Clock::time_point deadline) {
  return std::chrono::duration<Seconds>(deadline - Clock::now()).count();
}

/// CBC stops its search at its own limit, but its first LP solve never looks at the clock: the
/// solve runs in a child process that is killed a quarter second after the deadline, which then
/// counts as stopped with nothing found.
MilpOutcome solve_milp(const LpBuilder& lp, bool mip_start, Clock::time_point deadline,
                       double allowable_gap) {
  const auto bytes =
      run_until([&] { return encode(solve_cbc(lp, mip_start, left(deadline), allowable_gap)); },
                deadline + std::chrono::milliseconds(250));
  return bytes ? decode(*bytes) : MilpOutcome{};
}

}  // namespace recycle::planner
