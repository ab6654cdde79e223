#include "sim/metrics.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "core/error.hpp"
#include "planner/language/semantics.hpp"

namespace recycle::sim {

namespace {

using planner::Action;
using planner::ActionType;

bool is_busy(ActionType type) noexcept {
  return planner::is_compute(type) || type == ActionType::kOptimizer;
}

Nanos busy_time(const SimRun& run, std::size_t w, std::int32_t iteration) {
  const auto& actions = run.schedule.workers[w].actions;
  Nanos busy = 0;
  for (std::size_t pc = 0; pc < actions.size(); ++pc) {
    if (!is_busy(actions[pc].type)) continue;
    const ActionRecord& r = run.timeline.at(w, iteration, pc);
    busy += r.end - r.start;
  }
  return busy;
}

/// Activations are taken and given back as planner::held_delta says, in list order: the stream
/// runs one action at a time, so list order is time order for one worker.
void fill_peaks(const SimRun& run, std::size_t w, WorkerMetrics& m) {
  std::int32_t chunks = 0;
  Bytes bytes = 0;
  for (const Action& a : run.schedule.workers[w].actions) {
    const std::int32_t delta = planner::held_delta(a.type);
    chunks += delta;
    bytes += delta * run.model.held_bytes(a.virtual_stage);
    m.peak_inflight_chunks = std::max(m.peak_inflight_chunks, chunks);
    m.peak_activation_bytes = std::max(m.peak_activation_bytes, bytes);
  }
  m.peak_inflight_microbatches = static_cast<double>(m.peak_inflight_chunks) /
                                 static_cast<double>(run.schedule.layout.interleave);
}

std::string token_of(const SimRun& run, std::size_t w, std::size_t pc) {
  const planner::WorkerSchedule& ws = run.schedule.workers[w];
  return planner::to_token(ws.actions[pc], ws.id.dp);
}

}  // namespace

std::vector<CriticalStep> critical_path(const SimRun& run, std::int32_t iteration) {
  const Timeline& t = run.timeline;
  RECYCLE_ASSERT(iteration >= 0 && iteration < t.iterations,
                 "critical path of an iteration not simulated");
  // The action that ended last: the last of some worker's list (a stream runs in order).
  std::size_t last_worker = 0;
  for (std::size_t w = 1; w < t.workers(); ++w) {
    if (t.at(w, iteration, t.list_size(w) - 1).end >
        t.at(last_worker, iteration, t.list_size(last_worker) - 1).end) {
      last_worker = w;
    }
  }
  std::vector<CriticalStep> path;
  // A SEND's or RECV's record lasts until its transfer completes, but the transfer starts when
  // the later of the two is posted: an action reached as a transfer's cause is that posting, and
  // its step ends where the transfer starts.
  std::optional<Nanos> posted_at;
  NodeRef node{
      static_cast<std::int32_t>(t.index(last_worker, iteration, t.list_size(last_worker) - 1)),
      NodeKind::kAction};
  while (node.kind != NodeKind::kNone) {
    const auto index = static_cast<std::size_t>(node.index);
    if (node.kind == NodeKind::kTransfer) {
      const TransferRecord& x = t.transfers[index];
      if (x.iteration != iteration) break;
      const auto send = t.locate(static_cast<std::size_t>(x.send_action));
      path.push_back({CriticalStep::Kind::kTransfer,
                      run.schedule.workers[static_cast<std::size_t>(x.from)].id,
                      run.schedule.workers[static_cast<std::size_t>(x.to)].id,
                      token_of(run, send.worker, send.action), x.start, x.end});
      node = x.cause;
      if (node.kind == NodeKind::kAction) posted_at = x.start;
      continue;
    }
    if (node.kind == NodeKind::kCollective) {  // reached only through a REDUCE_GRAD, below
      node = t.collectives[index].cause;
      continue;
    }
    const Timeline::Position at = t.locate(index);
    if (at.iteration != iteration) break;
    const ActionRecord& r = t.actions[index];
    const planner::WorkerId id = run.schedule.workers[at.worker].id;
    CriticalStep step{CriticalStep::Kind::kAction,         id,      id,
                      token_of(run, at.worker, at.action), r.start, r.end};
    if (posted_at) step.end = std::min(step.end, *std::exchange(posted_at, std::nullopt));
    if (r.cause.kind == NodeKind::kCollective) {  // the all-reduce, from when the last peer came
      const CollectiveRecord& c = t.collectives[static_cast<std::size_t>(r.cause.index)];
      step.kind = CriticalStep::Kind::kAllReduce;
      step.start = c.start;
      if (c.iteration != iteration) break;
    }
    path.push_back(std::move(step));
    node = r.cause;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

Metrics compute_metrics(const SimRun& run, std::int64_t microbatch_size) {
  const Timeline& t = run.timeline;
  Metrics m;
  m.iterations = t.iterations;
  m.iteration_ends = t.iteration_ends;
  m.steady = t.steady;
  m.iteration_time = t.steady.period;
  for (const planner::WorkerSchedule& ws : run.schedule.workers) {
    m.microbatches_per_iteration += std::count_if(
        ws.actions.begin(), ws.actions.end(),
        [](const Action& a) { return a.virtual_stage == 0 && (a.type == ActionType::kForward); });
  }
  m.microbatch_size = microbatch_size;
  m.samples_per_iteration = m.microbatches_per_iteration * microbatch_size;
  if (m.iteration_time > 0)
    m.throughput = static_cast<double>(m.samples_per_iteration) / to_seconds(m.iteration_time);

  Nanos busy = 0;
  for (std::size_t w = 0; w < t.workers(); ++w) {
    WorkerMetrics wm;
    wm.id = run.schedule.workers[w].id;
    wm.busy = busy_time(run, w, t.iterations - 1);
    fill_peaks(run, w, wm);
    busy += wm.busy;
    m.workers.push_back(wm);
  }
  if (m.iteration_time > 0) {
    // Idle time over capacity, both exact integers until the division. Clamped at 0: before the
    // pattern settles, one iteration's work can exceed one period.
    const Nanos capacity = m.iteration_time * static_cast<Nanos>(t.workers());
    m.bubble_fraction =
        static_cast<double>(std::max<Nanos>(0, capacity - busy)) / static_cast<double>(capacity);
  }
  m.critical_path = critical_path(run, t.iterations - 1);
  if (!m.critical_path.empty())
    m.critical_path_length = m.critical_path.back().end - m.critical_path.front().start;
  return m;
}

}  // namespace recycle::sim
