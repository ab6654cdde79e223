#include "sim/shared_cores.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <queue>
#include <utility>

#include "core/error.hpp"
#include "planner/language/lower.hpp"
#include "planner/timing/cost_graph.hpp"

namespace recycle::sim {

namespace {

using planner::ExecutionGraph;

struct Successor {
  std::int32_t node = 0;
  std::int32_t distance = 0;
  Nanos delay = 0;
};

/// The walk over `iterations` copies of the graph; node u = iteration x nodes + node.
class SharedCores {
 public:
  SharedCores(const ExecutionGraph& graph, const std::vector<std::int32_t>& core_of,
              std::int32_t iterations, const std::vector<double>& throughput)
      : graph_(graph),
        n_(static_cast<std::size_t>(graph.nodes())),
        core_of_(core_of),
        throughput_(throughput),
        iterations_(iterations),
        successors_(n_),
        waiting_(n_ * static_cast<std::size_t>(iterations)),
        ready_(waiting_.size(), 0) {
    for (std::int32_t v = 0; v < graph.nodes(); ++v) {
      for (std::int32_t e = graph.first_edge(v); e < graph.first_edge(v + 1); ++e) {
        const ExecutionGraph::Edge edge = graph.edge(e);
        successors_[static_cast<std::size_t>(edge.from)].push_back({v, edge.distance, edge.delay});
        for (std::int32_t it = edge.distance; it < iterations; ++it) ++waiting_[index(it, v)];
      }
    }
    // An all-reduce's takers: the workers of the REDUCE_GRADs that wait for it.
    for (std::int32_t c = 0; c < graph.collectives(); ++c) {
      const std::int32_t v = graph.collective_node(c);
      std::vector<std::int32_t>& cores = takers_[v];
      for (const Successor& s : successors_[static_cast<std::size_t>(v)]) {
        const std::int32_t worker = graph.position(s.node).worker;
        if (s.distance == 0 && worker >= 0)
          cores.push_back(core_of[static_cast<std::size_t>(worker)]);
      }
    }
  }

  std::optional<std::vector<Nanos>> run() {
    for (std::size_t u = 0; u < waiting_.size(); ++u) {
      if (waiting_[u] == 0) arrivals_.push({0, u});
    }
    std::vector<double> ends(static_cast<std::size_t>(iterations_), 0);
    std::size_t done = 0;
    double now = 0;
    while (!arrivals_.empty() || !running_.empty()) {
      // Each running action progresses at its core's rate(): the next event is an arrival or
      // the first end among the running actions.
      double first_end = -1;
      for (const Running& r : running_) {
        const double end = now + r.left / rate(r.core);
        first_end = first_end < 0 ? end : std::min(first_end, end);
      }
      if (!arrivals_.empty() && (running_.empty() || arrivals_.top().first <= first_end)) {
        const double at = std::max(now, arrivals_.top().first);
        serve(at - now);
        now = at;
        while (!arrivals_.empty() && arrivals_.top().first <= now) {
          const std::size_t u = arrivals_.top().second;
          arrivals_.pop();
          if (u >= kNoWork) {  // a node of no worker, ending now
            finish_node(u - kNoWork, now, ends);
            ++done;
            continue;
          }
          const auto v = static_cast<std::int32_t>(u % n_);
          const Nanos work = graph_.duration(v);
          const std::int32_t worker = graph_.position(v).worker;
          const auto takers = takers_.find(v);
          if (work > 0 && worker >= 0) {
            start(u, work, core_of_[static_cast<std::size_t>(worker)]);
          } else if (work > 0 && takers != takers_.end() && !takers->second.empty()) {
            for (const std::int32_t core : takers->second) start(u, work, core);
          } else if (work > 0) {
            arrivals_.push({now + static_cast<double>(work), u + kNoWork});
          } else {
            finish_node(u, now, ends);
            ++done;
          }
        }
        continue;
      }
      serve(first_end - now);
      now = first_end;
      // Every action whose work is (about) done ends now; the others keep running.
      std::vector<std::size_t> ended;
      std::erase_if(running_, [&](const Running& r) {
        if (r.left > 1e-6 * std::max(1.0, now)) return false;
        --on_core_[r.core];
        if (--shares_[r.node] == 0) {  // an all-reduce ends with its last share
          shares_.erase(r.node);
          ended.push_back(r.node);
        }
        return true;
      });
      std::sort(ended.begin(), ended.end());
      for (const std::size_t u : ended) {
        finish_node(u, now, ends);
        ++done;
      }
    }
    if (done != waiting_.size()) return std::nullopt;  // something never became ready
    std::vector<Nanos> out;
    out.reserve(ends.size());
    for (const double e : ends) {
      if (!(e < static_cast<double>(kMaxClock))) refuse_clock_shared();
      out.push_back(static_cast<Nanos>(std::llround(e)));
    }
    return out;
  }

 private:
  [[nodiscard]] std::size_t index(std::int32_t it, std::int32_t v) const {
    return static_cast<std::size_t>(it) * n_ + static_cast<std::size_t>(v);
  }
  [[noreturn]] static void refuse_clock_shared() {
    planner::refuse_clock(planner::kUnnamedSchedule);
  }

  /// The speed of each action running on `core`, relative to its speed alone: throughput(n) / n
  /// with n actions on it.
  [[nodiscard]] double rate(std::int32_t core) const {
    const std::int32_t n = on_core_.at(core);
    const double total =
        throughput_.empty()
            ? 1.0
            : throughput_[std::min(static_cast<std::size_t>(n), throughput_.size()) - 1];
    return total / static_cast<double>(n);
  }

  /// Unrolled node `u` starts `work` ns of work on `core` (an all-reduce: one share per taker).
  void start(std::size_t u, Nanos work, std::int32_t core) {
    running_.push_back({u, static_cast<double>(work), core});
    ++on_core_[core];
    ++shares_[u];
  }

  /// `elapsed` ns pass: each running action gets its share of its core.
  void serve(double elapsed) {
    for (Running& r : running_) r.left -= elapsed * rate(r.core);
  }

  void finish_node(std::size_t u, double at, std::vector<double>& ends) {
    const auto it = static_cast<std::int32_t>(u / n_);
    const auto v = static_cast<std::int32_t>(u % n_);
    ends[static_cast<std::size_t>(it)] = std::max(ends[static_cast<std::size_t>(it)], at);
    for (const Successor& s : successors_[static_cast<std::size_t>(v)]) {
      const std::int32_t next = it + s.distance;
      if (next >= iterations_) continue;
      const std::size_t w = index(next, s.node);
      ready_[w] = std::max(ready_[w], at + static_cast<double>(s.delay));
      if (--waiting_[w] == 0) arrivals_.push({ready_[w], w});
    }
  }

  struct Running {
    std::size_t node = 0;
    double left = 0;  ///< work left, ns at full speed
    std::int32_t core = 0;
  };
  /// Added to an arrival's node: a node of no worker that takes time (an all-reduce on a
  /// network), which ends after its duration without a core.
  static constexpr std::size_t kNoWork = std::size_t{1} << 62;

  const ExecutionGraph& graph_;
  std::size_t n_;
  std::vector<std::int32_t> core_of_;
  std::vector<double> throughput_;
  std::map<std::int32_t, std::int32_t> on_core_;  ///< core -> actions running on it
  /// Per all-reduce node: the cores of the workers taking part (one share on each).
  std::map<std::int32_t, std::vector<std::int32_t>> takers_;
  std::map<std::size_t, std::int32_t> shares_;  ///< per running unrolled node: shares not ended
  std::int32_t iterations_;
  std::vector<std::vector<Successor>> successors_;
  std::vector<std::int32_t> waiting_;  ///< per unrolled node: predecessors not yet ended
  std::vector<double> ready_;          ///< per unrolled node: when its last predecessor allows
  /// Nodes whose predecessors have all ended, by the time they may start (then by node).
  std::priority_queue<std::pair<double, std::size_t>, std::vector<std::pair<double, std::size_t>>,
                      std::greater<>>
      arrivals_;
  std::vector<Running> running_;
};

}  // namespace

std::optional<std::vector<Nanos>> shared_core_iteration_ends(
    const planner::Schedule& schedule, const planner::CostModel& model,
    const planner::GraphOptions& options, const std::vector<std::int32_t>& core_of,
    std::int32_t iterations, const std::vector<double>& throughput) {
  RECYCLE_ASSERT(core_of.size() == schedule.workers.size() && iterations >= 1,
                 "shared cores need a core per worker and an iteration");
  RECYCLE_ASSERT(std::all_of(throughput.begin(), throughput.end(), [](double x) { return x > 0; }),
                 "a shared unit's throughput is positive");
  const planner::Schedule lowered =
      schedule.is_lowered() ? schedule : planner::lower(schedule, model, options.eager_sends);
  const ExecutionGraph graph = planner::timed_graph(lowered, model, options);
  if (!graph.ordered()) return std::nullopt;
  return SharedCores(graph, core_of, iterations, throughput).run();
}

}  // namespace recycle::sim
