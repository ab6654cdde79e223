#include "sim/simulator.hpp"

#include <algorithm>
#include <limits>

#include "core/error.hpp"
#include "planner/execution_graph.hpp"
#include "planner/lower.hpp"

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

/// Walks the graph `iterations` times and turns node times into records.
class Recorder {
 public:
  Recorder(const ExecutionGraph& graph, std::int32_t iterations)
      : graph_(graph),
        iterations_(iterations),
        transfers_(graph.transfers()),
        collectives_(graph.collectives()) {}

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
    if (std::max(records, transfer_records) >
        static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
      throw InputError("--iterations", "too many actions to simulate (" + std::to_string(records) +
                                           " over all iterations); simulate fewer iterations");
    }
    t.actions.resize(records);
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
        const NodeRef why = cause_of(node, it, cause, t);
        switch (graph_.kind(node)) {
          case NodeKindG::kAction: {
            // A SEND/RECV's record ends when the operation completes: with its transfer (an
            // eager RECV: or when posted, if the data came first).
            const std::int32_t x = graph_.transfer_of(node);
            const Nanos done = x < 0 ? end[k] : std::max(end[k], end[static_cast<std::size_t>(x)]);
            t.actions[static_cast<std::size_t>(record(node, it, t))] = {start[k], done, why};
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
  /// barrier is not recorded: its own cause stands for it).
  NodeRef cause_of(std::int32_t node, std::int32_t it, const std::vector<std::int32_t>& cause,
                   const Timeline& t) const {
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
        return cause_of(edge.from, at, cause, t);
    }
    return {};
  }

  const ExecutionGraph& graph_;
  std::int32_t iterations_ = 1;
  std::int32_t transfers_ = 0;
  std::int32_t collectives_ = 0;
};

}  // namespace

SimRun simulate(planner::Schedule schedule, CostModel model, SimOptions options) {
  if (options.iterations < 1) throw InputError("--iterations", "expected at least 1 iteration");
  check_workers(schedule, options.source);
  SimRun run;
  run.model = std::move(model);
  run.schedule = schedule.is_lowered() ? std::move(schedule) : planner::lower(schedule, run.model);
  for (planner::WorkerSchedule& ws : run.schedule.workers) {
    for (const Action& a : planner::implied_actions(ws)) ws.actions.push_back(a);
  }
  run.options = std::move(options);
  planner::GraphOptions graph_options;
  graph_options.network = run.options.network;
  graph_options.staggered_optimizer = run.options.staggered_optimizer;
  graph_options.eager_sends = run.options.eager_sends;
  const ExecutionGraph graph(run.schedule, run.model, graph_options, run.options.source);
  if (!graph.ordered()) report_deadlock(run.schedule, graph, run.options.source);
  run.timeline = Recorder(graph, run.options.iterations).run();
  return run;
}

}  // namespace recycle::sim
