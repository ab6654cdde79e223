#include "planner/exact_problem.hpp"

namespace recycle::planner::exact {

Schedule extract(const Problem& pr, const std::vector<Linear>& starts,
                 const std::vector<double>& solution) {
  Schedule out = pr.incumbent;
  for (std::size_t w = 0; w < pr.on_worker.size(); ++w) {
    std::vector<std::pair<std::int64_t, std::int32_t>> keyed;
    for (const std::int32_t n : pr.on_worker[w]) {
      keyed.emplace_back(
          std::llround(starts[static_cast<std::size_t>(n)].value(solution.data()) / kEps), n);
    }
    std::sort(keyed.begin(), keyed.end());
    auto& actions = out.workers[w].actions;
    actions.clear();
    for (const auto& [start, n] : keyed) actions.push_back(pr.act(n).action);
  }
  return out;
}

}  // namespace recycle::planner::exact
