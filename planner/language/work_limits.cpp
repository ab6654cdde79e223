#include "planner/language/work_limits.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"

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

}  // namespace recycle::planner
