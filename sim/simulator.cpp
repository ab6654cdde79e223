#include "sim/simulator.hpp"

#include <algorithm>
#include <optional>
#include <span>
#include <vector>

#include "core/error.hpp"
#include "planner/language/execution_graph.hpp"
#include "planner/language/lower.hpp"
#include "planner/timing/cost_graph.hpp"
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
    if (seen[layout.index(id)]++ > 0) {
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

/// The records of a run of every worker: each worker's are its own.
class SameWorkers {
 public:
  explicit SameWorkers(const ExecutionGraph& graph) : graph_(graph) {}
  [[nodiscard]] std::int32_t workers() const noexcept { return graph_.workers(); }
  [[nodiscard]] std::int32_t list_size(std::int32_t w) const noexcept {
    return graph_.list_size(w);
  }
  static constexpr bool kFolds = false;
  [[nodiscard]] std::int32_t self(std::int32_t r) const noexcept { return r; }
  [[nodiscard]] std::int32_t worker(std::int32_t r, std::int32_t, bool) const noexcept { return r; }
  [[nodiscard]] std::int32_t transfer(std::int32_t t, std::int32_t, std::int32_t) const noexcept {
    return t;
  }
  [[nodiscard]] std::int32_t transfers() const noexcept { return graph_.transfers(); }
  [[nodiscard]] std::uint64_t folded_nodes() const noexcept { return 0; }

 private:
  const ExecutionGraph& graph_;
};

/// Walks the graph `iterations` times and turns node times into records, written where `Map`
/// puts them: SameWorkers, or a FoldMap (sim/pipeline_fold.hpp) that writes a folded run's records
/// once for every worker repeating a simulated one.
template <class Map>
class Recorder {
 public:
  Recorder(const ExecutionGraph& graph, std::int32_t iterations, const Map& map)
      : graph_(graph),
        iterations_(iterations),
        map_(map),
        transfers_(map.transfers()),
        collectives_(graph.collectives()) {}

  Timeline run() {
    Timeline t;
    t.iterations = iterations_;
    t.first_record.push_back(0);
    for (std::int32_t w = 0; w < map_.workers(); ++w) {
      t.first_record.push_back(t.first_record.back() + static_cast<std::size_t>(map_.list_size(w)) *
                                                           static_cast<std::size_t>(iterations_));
    }
    const std::size_t records = t.first_record.back();
    const std::size_t transfer_records =
        static_cast<std::size_t>(transfers_) * static_cast<std::size_t>(iterations_);
    check_record_count(records, transfer_records);
    t.actions.resize(records);
    t.transfers.resize(transfer_records);
    t.collectives.resize(static_cast<std::size_t>(collectives_) *
                         static_cast<std::size_t>(iterations_));
    t.iteration_ends.assign(static_cast<std::size_t>(iterations_), 0);
    const auto n = static_cast<std::size_t>(graph_.nodes());
    std::vector<Nanos> previous, start(n), end(n);  // previous: from the second iteration on
    std::vector<std::int32_t> cause(n);
    // Folding: each node's cause and record end, for the workers that repeat the simulated ones.
    std::vector<Cause> causes(Map::kFolds ? n : 0);
    std::vector<Nanos> done_of(Map::kFolds ? n : 0);
    const std::vector<std::int32_t> last = graph_.last_nodes();
    planner::PeriodFinder period(graph_);
    for (std::int32_t it = 0; it < iterations_; ++it) {
      graph_.sweep(it == 0 ? std::span<const Nanos>{} : std::span<const Nanos>(previous), start,
                   end, cause);
      for (std::int32_t node = 0; node < graph_.nodes(); ++node) {
        const auto k = static_cast<std::size_t>(node);
        const Cause why = cause_of(node, it, cause);
        switch (graph_.kind(node)) {
          case NodeKindG::kAction: {
            // A SEND/RECV's record ends when the operation completes: with its transfer (an
            // eager RECV: or when posted, if the data came first).
            const std::int32_t x = graph_.transfer_of(node);
            const Nanos done = x < 0 ? end[k] : std::max(end[k], end[static_cast<std::size_t>(x)]);
            const auto at = graph_.position(node);
            const std::int32_t w = map_.self(at.worker);
            t.actions[t.index(static_cast<std::size_t>(w), it,
                              static_cast<std::size_t>(at.index))] = {start[k], done,
                                                                      ref(why, w, t)};
            if constexpr (Map::kFolds) {
              causes[k] = why;
              done_of[k] = done;
            }
            break;
          }
          case NodeKindG::kTransfer: {
            const std::int32_t x = graph_.transfer_index(node);
            const auto send = graph_.position(graph_.transfer_send(x));
            const std::int32_t to = graph_.position(graph_.transfer_recv(x)).worker;
            transfer(x, send, to, map_.self(send.worker), it, start[k], end[k], why, t);
            if constexpr (Map::kFolds) causes[k] = why;
            break;
          }
          case NodeKindG::kCollective: {
            Cause shared = why;
            shared.shared = true;  // the peer that arrived last, whoever repeats it
            t.collectives[static_cast<std::size_t>(it * collectives_ +
                                                   graph_.collective_index(node))] = {
                start[k], end[k], graph_.collective_stage(graph_.collective_index(node)), it,
                ref(shared, 0, t)};
            break;
          }
          case NodeKindG::kBarrier:
            break;
        }
      }
      if constexpr (Map::kFolds) repeat(it, start, end, done_of, causes, t);
      Nanos& iteration_end = t.iteration_ends[static_cast<std::size_t>(it)];
      for (const std::int32_t node : last)
        iteration_end = std::max(iteration_end, end[static_cast<std::size_t>(node)]);
      period.add(end);
      if (it + 1 < iterations_) {
        std::swap(previous, end);
        end.resize(n);
      }
    }
    // The period, when the recorded iterations have not repeated yet: more of the same walk.
    for (std::int32_t it = iterations_;
         !period.settled() && it < planner::kMaxSteadyStateIterations; ++it) {
      previous.swap(end);
      end.resize(n);
      graph_.sweep(previous, start, end);
      period.add(end);
    }
    t.steady = period.state();
    t.events = (static_cast<std::uint64_t>(n) + map_.folded_nodes()) *
               static_cast<std::uint64_t>(iterations_);
    return t;
  }

 private:
  /// The node whose end set a node's start, in iteration `at`; `shared` when it came through the
  /// optimizer barrier (which every worker waits on, so it names the same worker for all).
  struct Cause {
    std::int32_t node = -1;  ///< -1: none
    std::int32_t at = 0;
    bool shared = false;
  };

  /// Records transfer `x` (sent from list position `send`, received by graph worker `to`) as
  /// whole worker `w` sends it.
  void transfer(std::int32_t x, ExecutionGraph::Position send, std::int32_t to, std::int32_t w,
                std::int32_t it, Nanos start, Nanos end, const Cause& why, Timeline& t) const {
    t.transfers[transfer_record(map_.transfer(x, send.worker, w), it)] = {
        start,
        end,
        w,
        map_.worker(to, w, false),
        static_cast<std::int32_t>(
            t.index(static_cast<std::size_t>(w), it, static_cast<std::size_t>(send.index))),
        it,
        ref(why, w, t)};
  }

  /// Writes iteration `it`'s records of every simulated worker for the other workers that repeat
  /// it, one worker's list after another (so the writes run front to back).
  void repeat(std::int32_t it, std::span<const Nanos> start, std::span<const Nanos> end,
              std::span<const Nanos> done, std::span<const Cause> causes, Timeline& t) const {
    for (std::int32_t r = 0; r < graph_.workers(); ++r) {
      const auto [first_send, last_send] = map_.sends(r);
      for (const std::int32_t w : map_.copies(r)) {
        if (w == map_.self(r)) continue;
        const std::size_t base = t.index(static_cast<std::size_t>(w), it, 0);
        for (std::int32_t i = 0; i < graph_.list_size(r); ++i) {
          const auto k = static_cast<std::size_t>(graph_.node(r, i));
          t.actions[base + static_cast<std::size_t>(i)] = {start[k], done[k], ref(causes[k], w, t)};
        }
        for (std::int32_t x = first_send; x < last_send; ++x) {
          const auto k = static_cast<std::size_t>(graph_.transfer_node(x));
          transfer(x, graph_.position(graph_.transfer_send(x)),
                   graph_.position(graph_.transfer_recv(x)).worker, w, it, start[k], end[k],
                   causes[k], t);
        }
      }
    }
  }

  [[nodiscard]] std::size_t transfer_record(std::int32_t transfer, std::int32_t it) const {
    return static_cast<std::size_t>(it) * static_cast<std::size_t>(transfers_) +
           static_cast<std::size_t>(transfer);
  }

  /// What made `node` start in iteration `it`: the pred that set its start (the barrier is not
  /// recorded: its own cause stands for it).
  Cause cause_of(std::int32_t node, std::int32_t it, const std::vector<std::int32_t>& cause) const {
    Cause c;
    std::int32_t e = cause[static_cast<std::size_t>(node)];
    while (e >= 0) {
      const ExecutionGraph::Edge edge = graph_.edge(e);
      it -= edge.distance;
      if (graph_.kind(edge.from) != NodeKindG::kBarrier) return {edge.from, it, c.shared};
      c.shared = true;
      e = cause[static_cast<std::size_t>(edge.from)];
    }
    return {};
  }

  /// The record of cause `c`, for whole worker `w`.
  NodeRef ref(const Cause& c, std::int32_t w, const Timeline& t) const {
    if (c.node < 0) return {};
    switch (graph_.kind(c.node)) {
      case NodeKindG::kAction: {
        const auto at = graph_.position(c.node);
        const std::int32_t on = map_.worker(at.worker, w, c.shared);
        return {static_cast<std::int32_t>(t.index(static_cast<std::size_t>(on), c.at,
                                                  static_cast<std::size_t>(at.index))),
                NodeKind::kAction};
      }
      case NodeKindG::kTransfer: {
        const std::int32_t x = graph_.transfer_index(c.node);
        const std::int32_t r = graph_.position(graph_.transfer_send(x)).worker;
        const std::int32_t on = map_.worker(r, w, c.shared);
        return {static_cast<std::int32_t>(transfer_record(map_.transfer(x, r, on), c.at)),
                NodeKind::kTransfer};
      }
      case NodeKindG::kCollective:
        return {c.at * collectives_ + graph_.collective_index(c.node), NodeKind::kCollective};
      case NodeKindG::kBarrier:
        break;
    }
    return {};
  }

  const ExecutionGraph& graph_;
  std::int32_t iterations_ = 1;
  const Map& map_;
  std::int32_t transfers_ = 0;
  std::int32_t collectives_ = 0;
};

/// What running a schedule leaves: the lists as they ran (lowered, implied actions added) and the
/// records.
struct Ran {
  planner::Schedule schedule;
  Timeline timeline;
};

/// Runs `schedule`; with `fold`, a fold of `whole`, the records are the whole schedule's.
Ran run_graph(planner::Schedule schedule, const CostModel& model, const SimOptions& options,
              const PipelineFold* fold = nullptr, const planner::Schedule* whole = nullptr) {
  Ran ran;
  ran.schedule = schedule.is_lowered() ? std::move(schedule)
                                       : planner::lower(schedule, model, options.eager_sends);
  for (planner::WorkerSchedule& ws : ran.schedule.workers) {
    for (const Action& a : planner::implied_actions(ws)) ws.actions.push_back(a);
  }
  planner::GraphOptions graph_options;
  graph_options.network = options.network;
  graph_options.staggered_optimizer = options.staggered_optimizer;
  graph_options.eager_sends = options.eager_sends;
  const ExecutionGraph graph =
      planner::timed_graph(ran.schedule, model, graph_options, options.source);
  if (!graph.ordered()) report_deadlock(ran.schedule, graph, options.source);
  if (fold == nullptr) {
    const SameWorkers same(graph);
    ran.timeline = Recorder(graph, options.iterations, same).run();
    return ran;
  }
  std::vector<std::int32_t> sizes(static_cast<std::size_t>(graph.workers()));
  std::vector<std::int32_t> sends(sizes.size(), 0);
  for (std::int32_t w = 0; w < graph.workers(); ++w)
    sizes[static_cast<std::size_t>(w)] = graph.list_size(w);
  std::int32_t previous = 0;  // a worker's transfers are numbered together, in list order
  for (std::int32_t x = 0; x < graph.transfers(); ++x) {
    const std::int32_t from = graph.position(graph.transfer_send(x)).worker;
    RECYCLE_ASSERT(from >= previous, "transfers numbered worker by worker");
    previous = from;
    ++sends[static_cast<std::size_t>(from)];
  }
  const FoldMap map(*fold, *whole, sizes, sends);
  ran.timeline = Recorder(graph, options.iterations, map).run();
  return ran;
}

}  // namespace

SimRun simulate(planner::Schedule schedule, CostModel model, SimOptions options) {
  if (options.iterations < 1) throw InputError("--iterations", "expected at least 1 iteration");
  check_workers(schedule, options.source);
  SimRun run;
  run.model = std::move(model);
  run.options = std::move(options);
  if (run.options.fold_pipelines && schedule.has_lags() && !schedule.is_lowered()) {
    // Lists that run across iterations are lowered on the times of a second iteration, which
    // differ between a folded run and the whole one: they are lowered whole, and the pipelines
    // whose lowered lists agree fold.
    schedule = planner::lower(schedule, run.model, run.options.eager_sends);
  }
  if (run.options.fold_pipelines) {
    if (const std::optional<PipelineFold> fold = fold_pipelines(schedule, run.model)) {
      // Each stage's all-reduce still spans every peer of the whole schedule.
      CostModel folded = run.model;
      const std::vector<std::vector<planner::WorkerId>> peers = planner::all_reduce_peers(schedule);
      std::vector<Nanos> all_reduce(peers.size(), 0);
      for (std::size_t s = 0; s < peers.size(); ++s) {
        all_reduce[s] = run.model.all_reduce_time(static_cast<std::int32_t>(s), peers[s]);
      }
      folded.cluster.set_all_reduce_times(std::move(all_reduce));
      std::optional<Ran> ran;
      try {
        ran = run_graph(fold->schedule, folded, run.options, &*fold, &schedule);
      } catch (const InputError&) {
        // Bad input: the whole schedule is run below, so the error names what the user gave.
      }
      if (ran) {
        run.schedule = unfold_schedule(schedule, *fold, ran->schedule);
        run.timeline = std::move(ran->timeline);
        return run;
      }
    }
  }
  Ran ran = run_graph(std::move(schedule), run.model, run.options);
  run.schedule = std::move(ran.schedule);
  run.timeline = std::move(ran.timeline);
  return run;
}

const char* optimizer_name(const SimRun& run) noexcept {
  if (run.schedule.weight_versions == 2) return "2bw";
  return run.options.staggered_optimizer ? "staggered" : "barrier";
}

}  // namespace recycle::sim
