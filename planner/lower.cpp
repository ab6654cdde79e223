#include "planner/lower.hpp"

#include <algorithm>
#include <tuple>

#include "core/error.hpp"
#include "planner/dependency_graph.hpp"
#include "planner/execution_graph.hpp"
#include "planner/semantics.hpp"

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

Schedule lower(const Schedule& schedule, const CostModel& model) {
  const Layout& layout = schedule.layout;
  const std::int32_t last = layout.virtual_stages() - 1;
  for (const WorkerSchedule& worker : schedule.workers) {
    for (const Action& a : worker.actions)
      RECYCLE_ASSERT(is_compute(a.type), "lower() takes a compute-only schedule");
  }
  const RouteTable routes(schedule);
  const ActionIndex index(schedule);
  std::vector<std::int32_t> worker_index(static_cast<std::size_t>(layout.workers()), -1);
  for (std::size_t w = 0; w < schedule.workers.size(); ++w) {
    const WorkerId id = schedule.workers[w].id;
    worker_index[static_cast<std::size_t>(id.dp) * static_cast<std::size_t>(layout.pp) +
                 static_cast<std::size_t>(id.stage)] = static_cast<std::int32_t>(w);
  }

  // The compute-only run: each compute's key. Without one (the computes deadlock), every key ties
  // and each RECV goes right before its reader.
  GraphOptions options;
  options.staggered_optimizer = schedule.staggered_optimizer;
  const ExecutionGraph graph(schedule, model, options);
  const bool timed = graph.ordered();
  std::vector<Key> key(static_cast<std::size_t>(graph.nodes()), Key{0, 0});
  if (timed) {  // the graph numbers its nodes in a topological order
    std::vector<Nanos> start(key.size()), end(key.size());
    graph.sweep({}, start, end);
    for (std::size_t n = 0; n < key.size(); ++n) key[n] = {end[n], static_cast<std::int32_t>(n)};
  }
  const auto key_of = [&](std::int32_t w, std::int32_t i) {
    return key[static_cast<std::size_t>(graph.node(w, i))];
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
      const std::int32_t r =
          worker_index[static_cast<std::size_t>(to.dp) * static_cast<std::size_t>(layout.pp) +
                       static_cast<std::size_t>(to.stage)];
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
      if (reads >= 0 && index.ref(reads).worker == r) recv_at = index.ref(reads).index;
      if (timed) recv_at = std::min(recv_at, before(r, made));
      const Key order = timed ? made : Key{0, untimed++};
      slots[w].push_back({self + 1, order, *send});
      slots[static_cast<std::size_t>(r)].push_back({recv_at, order, recv});
    }
  }
  Schedule out = schedule;
  for (std::size_t w = 0; w < out.workers.size(); ++w) {
    WorkerSchedule& worker = out.workers[w];
    std::vector<Slot>& mine = slots[w];
    std::stable_sort(mine.begin(), mine.end(), [](const Slot& x, const Slot& y) {
      return std::tie(x.before, x.key) < std::tie(y.before, y.key);
    });
    std::vector<Action> lowered;
    lowered.reserve(worker.actions.size() + mine.size() + 2);
    std::size_t next = 0;
    for (std::size_t i = 0; i <= worker.actions.size(); ++i) {
      while (next < mine.size() && mine[next].before <= static_cast<std::int32_t>(i)) {
        lowered.push_back(mine[next++].action);
      }
      if (i < worker.actions.size()) lowered.push_back(worker.actions[i]);
    }
    lowered.push_back(Action{ActionType::kReduceGrad, worker.id.stage, -1, worker.id.dp});
    lowered.push_back(Action{ActionType::kOptimizer, worker.id.stage, -1, worker.id.dp});
    worker.actions = std::move(lowered);
  }
  return out;
}

Schedule lower(const Schedule& schedule, const Costs& costs) {
  return lower(schedule, CostModel::compute_only(costs));
}

Schedule lower(const Schedule& schedule) {
  return lower(schedule, Costs::uniform(schedule.layout.virtual_stages(), {1, 1, 1}));
}

Schedule strip_to_compute(const Schedule& schedule) {
  Schedule out = schedule;
  for (WorkerSchedule& worker : out.workers) {
    std::erase_if(worker.actions, [](const Action& a) { return !is_compute(a.type); });
  }
  return out;
}

}  // namespace recycle::planner
