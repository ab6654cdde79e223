#include "planner/work_limits.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "planner/candidates.hpp"

namespace recycle::planner {

std::int64_t chunks(const Layout& layout) noexcept {
  return std::int64_t{layout.dp} * layout.pp * layout.interleave * layout.microbatches;
}

void require_chunks(const Layout& layout, const std::string& where) {
  const std::int64_t n = chunks(layout);
  if (n <= kMaxChunks) return;
  throw InputError(
      where,
      fmt::format("dp {} x pp {} x interleave {} x {} micro-batches = {} chunks (an F, an "
                  "I and a W each) in one schedule; the limit is {} (about 9 GB)",
                  layout.dp, layout.pp, layout.interleave, layout.microbatches, n, kMaxChunks));
}

void require_simulation(const Layout& layout, std::int32_t iterations) {
  const std::int64_t n = chunks(layout);
  if (n * (iterations + 4) <= kMaxSimulatedChunks) return;
  throw InputError("--iterations",
                   fmt::format("{} iterations of {} chunks: {} chunk-iterations with the fixed "
                               "cost of 4, past the limit of {} (about 15 GB); {} iterations fit",
                               iterations, n, n * (iterations + 4), kMaxSimulatedChunks,
                               std::max<std::int64_t>(0, kMaxSimulatedChunks / n - 4)));
}

void require_traced(const Layout& layout, std::int32_t iterations, const std::string& flag) {
  const std::int64_t n = chunks(layout) * iterations;
  if (n <= kMaxTracedChunks) return;
  throw InputError(flag, fmt::format("{} iterations of {} chunks to draw, past the limit of {} "
                                     "chunk-iterations; draw one with --trace-iteration N",
                                     iterations, chunks(layout), kMaxTracedChunks));
}

void require_replay_work(std::int64_t events, const Layout& layout) {
  const std::int64_t n = chunks(layout);
  if (events <= kMaxReplayWork / n) return;
  throw InputError("--trace", fmt::format("{} events to replay on a job of {} chunks, {:.3g} "
                                          "chunk-events of planning; the limit is {} ({} events "
                                          "on this job: replay fewer --days or map onto fewer "
                                          "nodes)",
                                          events, n, static_cast<double>(events) * n,
                                          kMaxReplayWork, kMaxReplayWork / n));
}

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
