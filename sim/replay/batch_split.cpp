#include "sim/replay/batch_split.hpp"

#include <optional>

#include "core/error.hpp"

namespace recycle::sim {

namespace {

__extension__ typedef __int128 Wide;  // NOLINT(modernize-use-using): __extension__ needs typedef

/// A level of the slowest pipeline's time, num / den (exact: the times are whole nanoseconds).
struct Level {
  Wide num = 0;
  Wide den = 1;
};

/// Micro-batches a pipeline of `t` carries within `z`: floor(z x microbatches / time).
std::int64_t capacity(const TemplateShare& t, const Level& z) {
  return static_cast<std::int64_t>((z.num * t.microbatches) / (z.den * t.time));
}

Wide placed(const std::vector<TemplateShare>& templates, const Level& z) {
  Wide total = 0;
  for (const TemplateShare& t : templates) total += Wide{t.pipelines} * capacity(t, z);
  return total;
}

}  // namespace

std::vector<std::int64_t> split_batch(const std::vector<TemplateShare>& templates,
                                      std::int64_t batch) {
  RECYCLE_ASSERT(batch > 0, "a batch to split");
  std::vector<std::int64_t> most(templates.size(), 0);
  // The lowest level at which the pipelines hold the whole batch is where some template's k-th
  // micro-batch ends: for each template the smallest such k, by bisection, and the lowest of them.
  std::optional<Level> best;
  for (const TemplateShare& t : templates) {
    RECYCLE_ASSERT(t.time > 0 && t.microbatches > 0, "a template's time per micro-batch");
    if (t.pipelines <= 0) continue;
    std::int64_t lo = 1;
    std::int64_t hi = batch;  // t's pipelines alone hold the batch at k = batch
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (placed(templates, {Wide{t.time} * mid, t.microbatches}) >= batch) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    const Level z{Wide{t.time} * lo, t.microbatches};
    if (!best || z.num * best->den < best->num * z.den) best = z;
  }
  if (!best) return most;
  Wide excess = placed(templates, *best) - batch;
  for (std::size_t i = 0; i < templates.size(); ++i) {
    const TemplateShare& t = templates[i];
    if (t.pipelines <= 0) continue;
    most[i] = capacity(t, *best);
    // A pipeline whose last micro-batch ends exactly at the level can give it back.
    const bool binding = Wide{most[i]} * t.time * best->den == best->num * t.microbatches;
    if (binding && excess > 0 && most[i] > 0) {
      const Wide back = excess < t.pipelines ? excess : Wide{t.pipelines};
      excess -= back;
      if (back == t.pipelines) --most[i];
    }
  }
  RECYCLE_ASSERT(excess == 0, "the lowest level's excess is its binding pipelines' last ones");
  return most;
}

}  // namespace recycle::sim
