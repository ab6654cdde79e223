#include "planner/timing/memory.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"
#include "planner/language/semantics.hpp"
#include "planner/language/work_limits.hpp"
#include "profiles/profile.hpp"

namespace recycle::planner {

// A worker's peak: at most kMaxChunks chunks of activations held at once, next to its weights,
// their gradients and its optimizer state, each bounded by the profile's reader and synthesizer.
static_assert(kMaxChunks * profiles::kMaxMicrobatchBytes <=
                  std::numeric_limits<Bytes>::max() - 3 * profiles::kMaxStageBytes,
              "a worker's memory sums must fit 64 bits");

namespace {

/// Activations of one micro-batch on a physical stage: its chunks together.
Bytes microbatch_bytes(const CostModel& model, const Layout& layout, std::int32_t stage) {
  Bytes total = 0;
  for (std::int32_t k = 0; k < layout.interleave; ++k)
    total += model.held_bytes(layout.virtual_stage(stage, k));
  return total;
}

/// The live data-parallel ranks of `stage` with `failed` down: the layout's, and the ring peers
/// a pipeline simulated alone stands for (Cluster::set_absent_ring_peers), which share the
/// optimizer state with it.
std::int32_t live_ranks(const CostModel& model, const Layout& layout,
                        std::span<const WorkerId> failed, std::int32_t stage) {
  std::int32_t live = layout.dp + model.cluster.absent_ring_peers();
  for (const WorkerId& w : failed) live -= w.stage == stage ? 1 : 0;
  return live;
}

}  // namespace

std::string format_gb(Bytes bytes) {
  const double gb = static_cast<double>(bytes) / 1e9;
  return std::abs(gb) >= 1000 ? fmt::format("{:.0f} GB", gb) : fmt::format("{:.3g} GB", gb);
}

std::optional<std::vector<std::int32_t>> memory_limits(const CostModel& model, const Layout& layout,
                                                       const std::string& source,
                                                       std::int32_t weight_versions,
                                                       std::span<const WorkerId> failed) {
  if (model.worker_memory <= 0) return std::nullopt;
  std::vector<std::int32_t> out;
  for (std::int32_t s = 0; s < layout.pp; ++s) {
    const Bytes state = model.kept_bytes(s, weight_versions, live_ranks(model, layout, failed, s));
    const Bytes one = microbatch_bytes(model, layout, s);
    if (state + one > model.worker_memory) {
      throw InputError(
          source,
          fmt::format("stage {} does not fit a worker: {} of parameters{}, gradients and "
                      "optimizer state and {} of activations for one micro-batch need {}, "
                      "a worker has {}: {} short",
                      s, format_gb(state), weight_versions == 2 ? " (two versions)" : "",
                      format_gb(one), format_gb(state + one), format_gb(model.worker_memory),
                      format_gb(state + one - model.worker_memory)));
    }
    const Bytes fit =
        one > 0 ? (model.worker_memory - state) / one : std::numeric_limits<std::int32_t>::max();
    out.push_back(
        static_cast<std::int32_t>(std::min<Bytes>(fit, std::numeric_limits<std::int32_t>::max())));
  }
  return out;
}

std::vector<std::int32_t> planning_limits(const CostModel& model, const Layout& layout,
                                          std::optional<std::int32_t> given, std::int32_t fallback,
                                          std::span<const WorkerId> failed) {
  if (auto fit = memory_limits(model, layout, "--profile", 1, failed)) {
    if (given) {
      for (std::int32_t& l : *fit) l = std::min(l, *given);
    }
    return *fit;
  }
  return std::vector<std::int32_t>(static_cast<std::size_t>(layout.pp), given.value_or(fallback));
}

std::vector<Bytes> peak_memory(const Schedule& schedule, const CostModel& model) {
  std::vector<Bytes> out;
  out.reserve(schedule.workers.size());
  for (const WorkerSchedule& w : schedule.workers) {
    Bytes held = 0;
    for (const Action& a : w.actions) {  // what the list before left (held_at_start)
      if (a.lag != 0) held -= held_delta(a.type) * model.held_bytes(a.virtual_stage);
    }
    Bytes peak = held;
    for (const Action& a : w.actions) {
      held += held_delta(a.type) * model.held_bytes(a.virtual_stage);
      peak = std::max(peak, held);
    }
    out.push_back(
        model.kept_bytes(w.id.stage, schedule.weight_versions,
                         live_ranks(model, schedule.layout, schedule.failed, w.id.stage)) +
        peak);
  }
  return out;
}

void check_memory(const Schedule& schedule, const CostModel& model, const std::string& source) {
  if (model.worker_memory <= 0) return;
  // A stage that cannot hold one micro-batch is said so, whatever the schedule.
  (void)memory_limits(model, schedule.layout, source, schedule.weight_versions, schedule.failed);
  const std::vector<Bytes> peaks = peak_memory(schedule, model);
  for (std::size_t w = 0; w < peaks.size(); ++w) {
    if (peaks[w] <= model.worker_memory) continue;
    const WorkerSchedule& ws = schedule.workers[w];
    const Bytes state =
        model.kept_bytes(ws.id.stage, schedule.weight_versions,
                         live_ranks(model, schedule.layout, schedule.failed, ws.id.stage));
    throw InputError(
        source,
        fmt::format("{} does not fit worker {}: {} of state and {} of activations at its peak "
                    "need {}, a worker has {}: {} short",
                    schedule.generator.empty() ? "the schedule" : schedule.generator,
                    to_string(ws.id), format_gb(state), format_gb(peaks[w] - state),
                    format_gb(peaks[w]), format_gb(model.worker_memory),
                    format_gb(peaks[w] - model.worker_memory)));
  }
}

}  // namespace recycle::planner
