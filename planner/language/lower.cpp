#include "planner/language/lower.hpp"

#include <algorithm>
#include <tuple>

#include "core/error.hpp"
#include "planner/language/dependency_graph.hpp"
#include "planner/language/execution_graph.hpp"
#include "planner/language/semantics.hpp"
#include "planner/language/steady_state.hpp"

namespace recycle::planner {

namespace {

/// When a transfer's data is made (its producer's end in the compute-only run, then the
/// producer's rank in that run's causal order, which settles ties of time): the order of every
/// worker's communication, so both sides of every pair see their transfers in one order, an order
/// that never runs against a dependency (even when actions take no time).
using Key = std::pair<Nanos, std::int32_t>;

/// A SEND or RECV, to go before compute number `before` of its worker's list.
struct Slot {
  std::int32_t before = 0;
  Key key;
  Action action;
};

}  // namespace

Schedule lower(const Schedule& schedule, const ActionIndex& index, const ExecutionGraph& graph,
               LaggedPairs pairs) {
  const Layout& layout = schedule.layout;
  const std::int32_t last = layout.virtual_stages() - 1;
  for (const WorkerSchedule& worker : schedule.workers) {
    for (const Action& a : worker.actions)
      RECYCLE_ASSERT(!is_comm(a.type), "lower() takes a compute-only schedule");
  }
  const RouteTable routes(schedule);
  std::vector<std::int32_t> worker_index(static_cast<std::size_t>(layout.workers()), -1);
  for (std::size_t w = 0; w < schedule.workers.size(); ++w) {
    const WorkerId id = schedule.workers[w].id;
    worker_index[layout.index(id)] = static_cast<std::int32_t>(w);
  }

  // The compute-only run: each compute's key. Without one (the computes deadlock), every key ties
  // and each RECV goes right before its reader.
  const bool timed = graph.ordered();
  // Per worker, in list order (index.node(w, i)), so the searches below read one short run.
  std::vector<Key> key(static_cast<std::size_t>(index.actions()), Key{0, 0});
  if (timed) {  // the graph numbers its nodes in a topological order
    const auto nodes = static_cast<std::size_t>(graph.nodes());
    std::vector<Nanos> start(nodes), end(nodes);
    graph.sweep({}, start, end);
    if (schedule.has_lags()) {
      // Lists that run across iterations: the second iteration's times, when the actions of the
      // previous one it lists wait for their data (in the first they have none to wait for), so
      // every worker's transfers follow one clock.
      const std::vector<Nanos> first = end;
      graph.sweep(first, start, end);
    }
    for (std::int32_t w = 0; w < static_cast<std::int32_t>(schedule.workers.size()); ++w) {
      const auto n =
          static_cast<std::int32_t>(schedule.workers[static_cast<std::size_t>(w)].actions.size());
      for (std::int32_t i = 0; i < n; ++i) {
        const std::int32_t node = graph.node(w, i);
        key[static_cast<std::size_t>(index.node(w, i))] = {end[static_cast<std::size_t>(node)],
                                                           node};
      }
    }
  }
  const auto key_of = [&](std::int32_t w, std::int32_t i) {
    return key[static_cast<std::size_t>(index.node(w, i))];
  };
  // How many of worker r's computes come before data made at `k`: those that end earlier, and
  // those that end at that very moment unless they take no time and come later in the causal order
  // (one that takes time and ends by then cannot need the data). Their ends never decrease along
  // the list, so the answer is a prefix.
  const auto before = [&](std::int32_t r, const Key& k) {
    const auto n =
        static_cast<std::int32_t>(schedule.workers[static_cast<std::size_t>(r)].actions.size());
    const auto comes_before = [&](std::int32_t j) {
      const Key mine = key_of(r, j);
      if (mine.first != k.first) return mine.first < k.first;
      return graph.duration(graph.node(r, j)) > 0 || mine.second < k.second;
    };
    std::int32_t lo = 0, hi = n;
    while (lo < hi) {
      const std::int32_t mid = (lo + hi) / 2;
      if (comes_before(mid)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  };

  std::vector<std::vector<Slot>> slots(schedule.workers.size());
  std::int32_t untimed = 0;  // without a run, transfers keep the order they are found in
  for (std::size_t w = 0; w < schedule.workers.size(); ++w) {
    const WorkerSchedule& worker = schedule.workers[w];
    const auto wi = static_cast<std::int32_t>(w);
    for (std::size_t i = 0; i < worker.actions.size(); ++i) {
      const Action& a = worker.actions[i];
      const auto send = output_of(a, last);
      if (!send) continue;
      // The reader: the F of the next virtual stage where the routes put it, or the backward of
      // the previous one, which runs with that stage's F.
      const Action recv = partner(*send);
      const WorkerId to = routes.worker_of(a.owner, recv.virtual_stage, a.microbatch);
      if (to == worker.id) continue;
      const std::int32_t r = worker_index[layout.index(to)];
      RECYCLE_ASSERT(r >= 0, "a micro-batch routed to a worker that is not listed");
      const auto self = static_cast<std::int32_t>(i);
      const Key made = timed ? key_of(wi, self) : Key{0, 0};
      // The SEND right after its compute; the RECV after the reader's computes that come before
      // the data is made, and never after the compute that reads it.
      const std::int32_t reads =
          comm_compute(recv.type) == Producer::kForward
              ? index.first(ChunkAction::kF, a.owner, recv.virtual_stage, a.microbatch)
              : index.first_backward(a.owner, recv.virtual_stage, a.microbatch);
      auto recv_at =
          static_cast<std::int32_t>(schedule.workers[static_cast<std::size_t>(r)].actions.size());
      const std::int32_t at = reads - index.node(r, 0);  // reads on worker r: its list position
      // A reader of a later iteration (a lag above the data's) reads it in a later list: the
      // RECV goes in this one, wherever the data's time puts it.
      const std::vector<Action>& reader = schedule.workers[static_cast<std::size_t>(r)].actions;
      const bool same_list = reads >= 0 && at >= 0 &&
                             at < static_cast<std::int32_t>(reader.size()) &&
                             data_distance(reader[static_cast<std::size_t>(at)].lag, recv.lag) == 0;
      if (same_list && at < recv_at) recv_at = at;
      if (timed) recv_at = std::min(recv_at, before(r, made));
      const auto reader_size = static_cast<std::int32_t>(reader.size());
      if (pairs == LaggedPairs::kReadersList && timed && !same_list && recv_at == reader_size &&
          reads >= 0 && at >= 0 && at < reader_size &&
          data_distance(reader[static_cast<std::size_t>(at)].lag, recv.lag) == 1) {
        // Made after every compute of the reader's list, for a reader of the next list: the pair
        // goes in that list, both marked one iteration later, ordered by when the reader starts.
        const Key end = key_of(r, at);
        const Key start{end.first - graph.duration(graph.node(r, at)), end.second};
        Action late_send = *send, late_recv = recv;
        ++late_send.lag;
        ++late_recv.lag;
        slots[w].push_back({before(wi, start), start, late_send});
        slots[static_cast<std::size_t>(r)].push_back(
            {std::min(at, before(r, start)), start, late_recv});
        continue;
      }
      const Key order = timed ? made : Key{0, untimed++};
      slots[w].push_back({self + 1, order, *send});
      slots[static_cast<std::size_t>(r)].push_back({recv_at, order, recv});
    }
  }
  Schedule out = schedule;
  std::vector<std::int32_t> bucket;  // per list position: where its slots start in `order`
  std::vector<const Slot*> order;
  for (std::size_t w = 0; w < out.workers.size(); ++w) {
    WorkerSchedule& worker = out.workers[w];
    const std::vector<Slot>& mine = slots[w];
    // By (before, key): bucketed by position, then by key within a position (keys differ within a
    // worker: a producer's rank, or the running count).
    bucket.assign(worker.actions.size() + 2, 0);
    for (const Slot& slot : mine) ++bucket[static_cast<std::size_t>(slot.before) + 1];
    for (std::size_t i = 1; i < bucket.size(); ++i) bucket[i] += bucket[i - 1];
    order.resize(mine.size());
    for (const Slot& slot : mine)
      order[static_cast<std::size_t>(bucket[static_cast<std::size_t>(slot.before)]++)] = &slot;
    for (std::size_t i = 1; i < order.size(); ++i) {
      const Slot* slot = order[i];
      std::size_t j = i;
      for (; j > 0 &&
             std::tie(slot->before, slot->key) < std::tie(order[j - 1]->before, order[j - 1]->key);
           --j)
        order[j] = order[j - 1];
      order[j] = slot;
    }
    std::vector<Action> lowered;
    lowered.reserve(worker.actions.size() + mine.size() + 2);
    std::size_t next = 0;
    for (std::size_t i = 0; i <= worker.actions.size(); ++i) {
      while (next < order.size() && order[next]->before <= static_cast<std::int32_t>(i)) {
        lowered.push_back(order[next++]->action);
      }
      if (i < worker.actions.size()) lowered.push_back(worker.actions[i]);
    }
    // The REDUCE_GRAD and OPT the worker implies, where it lists none (2bw places its own).
    for (const Action& a : implied_actions(worker)) lowered.push_back(a);
    worker.actions = std::move(lowered);
  }
  return out;
}

Schedule lower(const Schedule& schedule, const ActionIndex& index, const ExecutionGraph& graph,
               const LoweredPeriod& period) {
  Schedule lowered = lower(schedule, index, graph, LaggedPairs::kPreviousList);
  if (!schedule.has_lags()) return lowered;
  Schedule late = lower(schedule, index, graph, LaggedPairs::kReadersList);
  if (late.workers == lowered.workers) return lowered;
  const std::optional<Nanos> now = period(lowered);
  const std::optional<Nanos> then = period(late);
  return then && (!now || *then < *now) ? late : lowered;
}

Schedule lower(const Schedule& schedule, const Costs& costs) {
  GraphOptions options;
  options.staggered_optimizer = schedule.staggered_optimizer;
  const auto duration = [&costs](WorkerId, const Action& a) { return costs.duration(a); };
  const ExecutionGraph graph(schedule, duration, options);
  GraphOptions run = options;
  run.network = Network::kRuntime;
  return lower(schedule, ActionIndex(schedule), graph,
               [&](const Schedule& lowered) -> std::optional<Nanos> {
                 const auto st = steady_state(ExecutionGraph(lowered, duration, run));
                 return st ? std::optional<Nanos>(st->period) : std::nullopt;
               });
}

Schedule lower(const Schedule& schedule) {
  return lower(schedule, Costs::uniform(schedule.layout.virtual_stages(), {1, 1, 1}));
}

Schedule strip_to_compute(const Schedule& schedule) {
  Schedule out = schedule;
  // REDUCE_GRAD and OPT go too, where the list implies them (at its end, this iteration's); where
  // they are placed across iterations (2bw) they stay.
  const bool placed = schedule.has_lags();
  for (WorkerSchedule& worker : out.workers) {
    std::erase_if(worker.actions, [placed](const Action& a) {
      return is_comm(a.type) || (!placed && !is_compute(a.type));
    });
  }
  return out;
}

}  // namespace recycle::planner
