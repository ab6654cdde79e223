#include "planner/language/execution_graph.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "planner/language/dependency_graph.hpp"
#include "planner/language/execution_graph_build.hpp"
#include "planner/language/semantics.hpp"

namespace recycle::planner {

namespace {

/// Action times from a function; a free network.
struct FunctionDurations {
  const ActionDuration& duration;

  [[nodiscard]] Nanos action(WorkerId id, const Action& a) const { return duration(id, a); }
  [[nodiscard]] Nanos transfer(WorkerId, WorkerId, const Action&) const { return 0; }
  [[nodiscard]] Nanos all_reduce(std::int32_t, std::span<const WorkerId>) const { return 0; }
};

}  // namespace

std::vector<Action> implied_actions(const WorkerSchedule& worker) {
  std::vector<Action> out;
  for (const ActionType type : {ActionType::kReduceGrad, ActionType::kOptimizer}) {
    if (std::none_of(worker.actions.begin(), worker.actions.end(),
                     [type](const Action& a) { return a.type == type; })) {
      out.push_back({type, worker.id.stage, -1, worker.id.dp});
    }
  }
  return out;
}

std::vector<std::vector<WorkerId>> all_reduce_peers(const Schedule& schedule) {
  const std::int32_t pp = schedule.layout.pp;
  std::vector<std::vector<WorkerId>> peers(static_cast<std::size_t>(std::max(pp, 0)));
  for (const WorkerSchedule& ws : schedule.workers) {
    if (ws.id.stage >= 0 && ws.id.stage < pp)
      peers[static_cast<std::size_t>(ws.id.stage)].push_back(ws.id);
  }
  return peers;
}

ExecutionGraph::ExecutionGraph(const Schedule& schedule, const ActionDuration& duration,
                               const GraphOptions& options, const std::string& source) {
  build(schedule, ActionIndex(schedule), FunctionDurations{duration}, options, source);
}

std::int32_t ExecutionGraph::implied(std::int32_t worker) const noexcept {
  return static_cast<std::int32_t>(implied_[static_cast<std::size_t>(worker)].size());
}

std::vector<std::int32_t> ExecutionGraph::last_nodes() const {
  std::vector<std::int32_t> out;
  out.reserve(static_cast<std::size_t>(workers()));
  for (std::int32_t w = 0; w < workers(); ++w) out.push_back(node(w, list_size(w) - 1));
  return out;
}

void ExecutionGraph::reorder(std::int32_t worker, std::span<const std::int32_t> nodes) {
  const std::int32_t size = list_size(worker);
  const std::int32_t opt = node(worker, size - 1);
  const std::int32_t reduce = node(worker, size - 2);
  RECYCLE_ASSERT(size == static_cast<std::int32_t>(nodes.size()) + 2 &&
                     action(worker, size - 1).type == ActionType::kOptimizer &&
                     action(worker, size - 2).type == ActionType::kReduceGrad,
                 "reorder() takes every compute action of a compute-only worker");
  // The rules of build(): a compute's first edge is its stream predecessor (the first compute's
  // is the previous iteration's OPT); REDUCE_GRAD's second, after its all-reduce; the all-reduce
  // hears from the worker's last compute.
  const auto set = [this](std::int32_t e, std::int32_t from, std::int32_t distance) {
    pred_[static_cast<std::size_t>(e)] =
        static_cast<std::uint32_t>(from) | (static_cast<std::uint32_t>(distance) << 31);
  };
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    set(first_edge(nodes[k]), k == 0 ? opt : nodes[k - 1], k == 0 ? 1 : 0);
  }
  const std::int32_t last = nodes.empty() ? opt : nodes.back();
  const std::int32_t last_distance = nodes.empty() ? 1 : 0;
  const std::int32_t collective = edge(first_edge(reduce)).from;
  set(first_edge(reduce) + 1, last, last_distance);
  for (std::int32_t e = first_edge(collective); e < first_edge(collective + 1); ++e) {
    const Edge arrival = edge(e);
    if (kind(arrival.from) == NodeKind::kAction && position(arrival.from).worker == worker) {
      set(e, last, last_distance);
    }
  }
  reordered_ = true;
}

bool ExecutionGraph::topological_order(std::vector<std::int32_t>& order,
                                       std::span<const std::int32_t> hint) const {
  const auto n = static_cast<std::size_t>(nodes());
  // 0: not reached; 1: on the walk's stack (its predecessors are being placed); 2: placed.
  std::vector<char> state(n, 0);
  // The stack: a node and the next of its edges to read.
  std::vector<std::pair<std::int32_t, std::int32_t>> stack;
  order.clear();
  order.reserve(n);
  const auto place = [&](std::int32_t root) {
    const auto r = static_cast<std::size_t>(root);
    if (state[r] == 2) return true;
    // Most nodes of a hint that nearly holds find every predecessor placed: placed at once.
    bool ready = true;
    for (std::int32_t e = first_edge_[r]; e < first_edge_[r + 1] && ready; ++e) {
      const std::uint32_t p = pred_[static_cast<std::size_t>(e)];
      ready = (p >> 31) != 0 || state[p] == 2;
    }
    if (ready) {
      state[r] = 2;
      order.push_back(root);
      return true;
    }
    state[r] = 1;
    stack.emplace_back(root, first_edge_[static_cast<std::size_t>(root)]);
    while (!stack.empty()) {
      auto& [v, e] = stack.back();
      const std::int32_t end = first_edge_[static_cast<std::size_t>(v) + 1];
      bool descended = false;
      for (; e < end; ++e) {
        const std::uint32_t p = pred_[static_cast<std::size_t>(e)];
        if (p >> 31) continue;  // from the previous iteration
        const char s = state[p];
        if (s == 2) continue;
        if (s == 1) return false;  // a cycle
        state[p] = 1;
        ++e;
        stack.emplace_back(static_cast<std::int32_t>(p), first_edge_[p]);
        descended = true;
        break;
      }
      if (descended) continue;
      state[static_cast<std::size_t>(v)] = 2;
      order.push_back(v);
      stack.pop_back();
    }
    return true;
  };
  for (const std::int32_t v : hint) {
    if (v >= 0 && static_cast<std::size_t>(v) < n && !place(v)) return false;
  }
  for (std::size_t v = 0; v < n; ++v) {
    if (!place(static_cast<std::int32_t>(v))) return false;
  }
  return true;
}

namespace {

/// One node of a sweep: its start from its edges, its end, its cause.
template <bool kDelays>
inline void time_node(std::size_t node, const std::int32_t* first_edge, const std::uint32_t* pred,
                      const Nanos* delay, const Nanos* duration, const Nanos* previous_end,
                      Nanos* start, Nanos* end, std::int32_t* cause) {
  Nanos at = 0;
  std::int32_t why = -1;
  for (std::int32_t k = first_edge[node]; k < first_edge[node + 1]; ++k) {
    const std::uint32_t p = pred[k];
    Nanos t = 0;
    if ((p >> 31) == 0) {
      t = end[p];
    } else if (previous_end != nullptr) {
      t = previous_end[p & graph_build::kFrom];
    } else {
      continue;
    }
    if constexpr (kDelays) t += delay[k];
    if (why < 0 || t > at) {
      at = std::max(at, t);
      why = k;
    }
  }
  // Ends and durations are at most kMaxClock and delays too, so at + duration fits in Nanos.
  start[node] = at;
  end[node] = std::min(at + duration[node], kMaxClock);
  if (cause != nullptr) cause[node] = why;
}

}  // namespace

void ExecutionGraph::sweep(std::span<const Nanos> previous_end, std::span<Nanos> start,
                           std::span<Nanos> end, std::span<std::int32_t> cause) const {
  RECYCLE_ASSERT(ordered(), "timing a schedule that deadlocks, or reordered: walk an order");
  const Nanos* previous = previous_end.empty() ? nullptr : previous_end.data();
  std::int32_t* why = cause.empty() ? nullptr : cause.data();
  const Nanos* duration = durations(previous);
  const std::size_t n = kind_.size();
  if (delay_.empty()) {
    for (std::size_t node = 0; node < n; ++node) {
      time_node<false>(node, first_edge_.data(), pred_.data(), nullptr, duration, previous,
                       start.data(), end.data(), why);
    }
  } else {
    for (std::size_t node = 0; node < n; ++node) {
      time_node<true>(node, first_edge_.data(), pred_.data(), delay_.data(), duration, previous,
                      start.data(), end.data(), why);
    }
  }
  check_clock(end);
}

void ExecutionGraph::sweep(std::span<const std::int32_t> order, std::span<const Nanos> previous_end,
                           std::span<Nanos> start, std::span<Nanos> end,
                           std::span<std::int32_t> cause) const {
  const Nanos* previous = previous_end.empty() ? nullptr : previous_end.data();
  std::int32_t* why = cause.empty() ? nullptr : cause.data();
  const Nanos* duration = durations(previous);
  for (const std::int32_t node : order) {
    if (delay_.empty()) {
      time_node<false>(static_cast<std::size_t>(node), first_edge_.data(), pred_.data(), nullptr,
                       duration, previous, start.data(), end.data(), why);
    } else {
      time_node<true>(static_cast<std::size_t>(node), first_edge_.data(), pred_.data(),
                      delay_.data(), duration, previous, start.data(), end.data(), why);
    }
  }
  check_clock(end);
}

void refuse_clock(const std::string& source) {
  throw InputError(source, fmt::format("the schedule's timing passes {:.0f} years of simulated "
                                       "time, the most this tool represents: lower the costs "
                                       "(--costs, --profile, --job), --microbatches or "
                                       "--iterations",
                                       to_seconds(kMaxClock) / (365.25 * 86400)));
}

void ExecutionGraph::check_clock(std::span<const Nanos> end) const {
  for (std::int32_t w = 0; w < workers(); ++w) {
    if (end[static_cast<std::size_t>(node(w, list_size(w) - 1))] >= kMaxClock)
      refuse_clock(source_);
  }
}

}  // namespace recycle::planner
