#include "sim/simulator.hpp"

#include <algorithm>
#include <optional>

#include "core/error.hpp"
#include "planner/execution_graph.hpp"
#include "planner/lower.hpp"
#include "sim/pipeline_fold.hpp"

namespace recycle::sim {

namespace {

using planner::Action;
using planner::ExecutionGraph;
using planner::WorkerId;
using NodeKindG = planner::ExecutionGraph::NodeKind;

void check_workers(const planner::Schedule& schedule, const std::string& source) {
  const planner::Layout& layout = schedule.layout;
  if (schedule.workers.empty()) throw InputError(source, "the schedule has no live workers");
  std::vector<char> seen(static_cast<std::size_t>(layout.dp) * static_cast<std::size_t>(layout.pp),
                         0);
  for (const planner::WorkerSchedule& ws : schedule.workers) {
    const WorkerId id = ws.id;
    if (id.dp < 0 || id.dp >= layout.dp || id.stage < 0 || id.stage >= layout.pp) {
      throw InputError(source, "worker " + planner::to_string(id) + " is outside the layout");
    }
    if (seen[static_cast<std::size_t>(id.dp) * static_cast<std::size_t>(layout.pp) +
             static_cast<std::size_t>(id.stage)]++ > 0) {
      throw InputError(source, "worker " + planner::to_string(id) + " is listed twice");
    }
    if (ws.actions.empty())
      throw InputError(source, "worker " + planner::to_string(id) + " has no actions");
  }
}

/// Names the first action that never runs, or never completes (a SEND/RECV whose transfer never
/// happens), and how many workers are stuck.
[[noreturn]] void report_deadlock(const planner::Schedule& schedule, const ExecutionGraph& graph,
                                  const std::string& source) {
  std::string stuck;
  std::size_t count = 0;
  for (std::int32_t w = 0; w < graph.workers(); ++w) {
    for (std::int32_t i = 0; i < graph.list_size(w); ++i) {
      const std::int32_t node = graph.node(w, i);
      const std::int32_t transfer = graph.transfer_of(node);
      const bool runs = graph.runs(node);
      if (runs && (transfer < 0 || graph.runs(transfer))) continue;
      if (count++ == 0) {
        const planner::WorkerSchedule& ws = schedule.workers[static_cast<std::size_t>(w)];
        stuck = "worker " + planner::to_string(ws.id) + " action " +
                planner::to_token(graph.action(w, i), ws.id.dp) + " of iteration 1 never " +
                (runs ? "completes" : "runs");
      }
      break;
    }
  }
  throw InputError(
      source, "the schedule deadlocks: " + stuck +
                  (count > 1 ? " (" + std::to_string(count - 1) + " more workers stuck)" : "") +
                  "; `recycle plan --check` says why");
}

/// Walks the graph `iterations` times and turns node times into records; with `through_barrier`,
/// also marks the action records whose cause is the optimizer barrier's (sim/pipeline_fold.hpp).
class Recorder {
 public:
  Recorder(const ExecutionGraph& graph, std::int32_t iterations,
           std::vector<char>* through_barrier = nullptr)
      : graph_(graph),
        iterations_(iterations),
        transfers_(graph.transfers()),
        collectives_(graph.collectives()),
        through_barrier_(through_barrier) {}

  Timeline run() {
    Timeline t;
    t.iterations = iterations_;
    t.first_record.push_back(0);
    for (std::int32_t w = 0; w < graph_.workers(); ++w) {
      t.first_record.push_back(t.first_record.back() +
                               static_cast<std::size_t>(graph_.list_size(w)) *
                                   static_cast<std::size_t>(iterations_));
    }
    const std::size_t records = t.first_record.back();
    const std::size_t transfer_records =
        static_cast<std::size_t>(transfers_) * static_cast<std::size_t>(iterations_);
    check_record_count(records, transfer_records);
    t.actions.resize(records);
    if (through_barrier_ != nullptr) through_barrier_->assign(records, 0);
    t.transfers.resize(transfer_records);
    t.collectives.resize(static_cast<std::size_t>(collectives_) *
                         static_cast<std::size_t>(iterations_));
    t.iteration_ends.assign(static_cast<std::size_t>(iterations_), 0);
    const auto n = static_cast<std::size_t>(graph_.nodes());
    std::vector<Nanos> previous, start(n), end(n);  // previous: from the second iteration on
    std::vector<std::int32_t> cause(n);
    const std::vector<std::int32_t> last = graph_.last_nodes();
    for (std::int32_t it = 0; it < iterations_; ++it) {
      graph_.sweep(it == 0 ? std::span<const Nanos>{} : std::span<const Nanos>(previous), start,
                   end, cause);
      for (std::int32_t node = 0; node < graph_.nodes(); ++node) {
        const auto k = static_cast<std::size_t>(node);
        bool barrier = false;
        const NodeRef why = cause_of(node, it, cause, t, barrier);
        switch (graph_.kind(node)) {
          case NodeKindG::kAction: {
            // A SEND/RECV's record ends when the operation completes: with its transfer (an
            // eager RECV: or when posted, if the data came first).
            const std::int32_t x = graph_.transfer_of(node);
            const Nanos done = x < 0 ? end[k] : std::max(end[k], end[static_cast<std::size_t>(x)]);
            const auto r = static_cast<std::size_t>(record(node, it, t));
            t.actions[r] = {start[k], done, why};
            if (through_barrier_ != nullptr && barrier) (*through_barrier_)[r] = 1;
            break;
          }
          case NodeKindG::kTransfer: {
            const std::int32_t x = graph_.transfer_index(node);
            const std::int32_t send = graph_.transfer_send(x);
            t.transfers[static_cast<std::size_t>(transfer_record(node, it))] = {
                start[k],
                end[k],
                graph_.position(send).worker,
                graph_.position(graph_.transfer_recv(x)).worker,
                record(send, it, t),
                it,
                why};
            break;
          }
          case NodeKindG::kCollective:
            t.collectives[static_cast<std::size_t>(collective_record(node, it))] = {
                start[k], end[k], graph_.collective_stage(graph_.collective_index(node)), it, why};
            break;
          case NodeKindG::kBarrier:
            break;
        }
      }
      Nanos& iteration_end = t.iteration_ends[static_cast<std::size_t>(it)];
      for (const std::int32_t node : last)
        iteration_end = std::max(iteration_end, end[static_cast<std::size_t>(node)]);
      if (it + 1 < iterations_) {
        std::swap(previous, end);
        end.resize(n);
      }
    }
    t.events = static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(iterations_);
    return t;
  }

 private:
  [[nodiscard]] std::int32_t record(std::int32_t node, std::int32_t it, const Timeline& t) const {
    const auto at = graph_.position(node);
    return static_cast<std::int32_t>(
        t.index(static_cast<std::size_t>(at.worker), it, static_cast<std::size_t>(at.index)));
  }
  [[nodiscard]] std::int32_t transfer_record(std::int32_t node, std::int32_t it) const {
    return it * transfers_ + graph_.transfer_index(node);
  }
  [[nodiscard]] std::int32_t collective_record(std::int32_t node, std::int32_t it) const {
    return it * collectives_ + graph_.collective_index(node);
  }

  /// What made `node` start in iteration `it`: the record of the pred that set its start (the
  /// barrier is not recorded: its own cause stands for it, and `barrier` is set).
  NodeRef cause_of(std::int32_t node, std::int32_t it, const std::vector<std::int32_t>& cause,
                   const Timeline& t, bool& barrier) const {
    const std::int32_t e = cause[static_cast<std::size_t>(node)];
    if (e < 0) return {};
    const ExecutionGraph::Edge edge = graph_.edge(e);
    const std::int32_t at = it - edge.distance;
    switch (graph_.kind(edge.from)) {
      case NodeKindG::kAction:
        return {record(edge.from, at, t), NodeKind::kAction};
      case NodeKindG::kTransfer:
        return {transfer_record(edge.from, at), NodeKind::kTransfer};
      case NodeKindG::kCollective:
        return {collective_record(edge.from, at), NodeKind::kCollective};
      case NodeKindG::kBarrier:
        barrier = true;
        return cause_of(edge.from, at, cause, t, barrier);
    }
    return {};
  }

  const ExecutionGraph& graph_;
  std::int32_t iterations_ = 1;
  std::int32_t transfers_ = 0;
  std::int32_t collectives_ = 0;
  std::vector<char>* through_barrier_ = nullptr;
};

/// What running a schedule leaves: the lists as they ran (lowered, implied actions added) and the
/// records.
struct Ran {
  planner::Schedule schedule;
  Timeline timeline;
};

Ran run_graph(planner::Schedule schedule, const CostModel& model, const SimOptions& options,
              std::vector<char>* through_barrier) {
  Ran ran;
  ran.schedule = schedule.is_lowered() ? std::move(schedule) : planner::lower(schedule, model);
  for (planner::WorkerSchedule& ws : ran.schedule.workers) {
    for (const Action& a : planner::implied_actions(ws)) ws.actions.push_back(a);
  }
  planner::GraphOptions graph_options;
  graph_options.network = options.network;
  graph_options.staggered_optimizer = options.staggered_optimizer;
  graph_options.eager_sends = options.eager_sends;
  const ExecutionGraph graph(ran.schedule, model, graph_options, options.source);
  if (!graph.ordered()) report_deadlock(ran.schedule, graph, options.source);
  ran.timeline = Recorder(graph, options.iterations, through_barrier).run();
  return ran;
}

}  // namespace

SimRun simulate(planner::Schedule schedule, CostModel model, SimOptions options) {
  if (options.iterations < 1) throw InputError("--iterations", "expected at least 1 iteration");
  check_workers(schedule, options.source);
  SimRun run;
  run.model = std::move(model);
  run.options = std::move(options);
  if (run.options.fold_pipelines) {
    if (const std::optional<PipelineFold> fold = fold_pipelines(schedule, run.model)) {
      CostModel folded = run.model;
      folded.cluster.set_absent_ring_peers(run.model.cluster.absent_ring_peers() +
                                           fold->folded_pipelines);
      std::vector<char> through_barrier;
      std::optional<Ran> ran;
      try {
        ran = run_graph(fold->schedule, folded, run.options, &through_barrier);
      } catch (const InputError&) {
        // Bad input: the whole schedule is run below, so the error names what the user gave.
      }
      if (ran) {
        run.schedule = unfold_schedule(schedule, *fold, ran->schedule);
        run.timeline = unfold_timeline(ran->timeline, through_barrier, run.schedule, *fold);
        return run;
      }
    }
  }
  Ran ran = run_graph(std::move(schedule), run.model, run.options, nullptr);
  run.schedule = std::move(ran.schedule);
  run.timeline = std::move(ran.timeline);
  return run;
}

}  // namespace recycle::sim
