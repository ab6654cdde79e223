#include "planner/list_scheduler.hpp"

#include <algorithm>
#include <deque>
#include <queue>
#include <tuple>

#include "core/error.hpp"

namespace recycle::planner {

namespace {

constexpr Nanos kUnknown = -1;

enum Priority : std::int32_t { kInput = 0, kForward = 1, kOwnWeight = 2, kReroutedWeight = 3 };

/// A micro-batch of some owner, ready to run from `ready` on.
struct Ready {
  Nanos ready = 0;
  std::int32_t microbatch = 0;
  std::int32_t owner = 0;
  friend bool operator>(const Ready& a, const Ready& b) {
    return std::tie(a.ready, a.microbatch, a.owner) > std::tie(b.ready, b.microbatch, b.owner);
  }
};
using ReadyHeap = std::priority_queue<Ready, std::vector<Ready>, std::greater<>>;

struct WorkerState {
  WorkerId id;
  Nanos free_at = 0;
  std::int32_t held = 0;
  std::int64_t remaining = 0;  ///< actions still to place
  std::uint64_t version = 0;
  ReadyHeap forward, input;
  std::deque<Ready> own_weight, rerouted_weight;
};

struct Candidate {
  Nanos start = 0;
  std::int32_t priority = 0;
  std::int32_t worker = 0;
  std::uint64_t version = 0;
  friend bool operator>(const Candidate& a, const Candidate& b) {
    return std::tie(a.start, a.priority, a.worker) > std::tie(b.start, b.priority, b.worker);
  }
};

class Scheduler {
 public:
  explicit Scheduler(const ListScheduleInput& in)
      : in_(in), layout_(in.skeleton->layout), routes_(*in.skeleton) {
    RECYCLE_ASSERT(layout_.interleave == 1, "list scheduling needs interleave 1");
    const auto tasks = static_cast<std::size_t>(layout_.dp) * static_cast<std::size_t>(layout_.pp) *
                       static_cast<std::size_t>(layout_.microbatches);
    f_end_.assign(tasks, kUnknown);
    index_.assign(static_cast<std::size_t>(layout_.workers()), -1);
    std::vector<WorkerId> failed = in.skeleton->failed;
    std::sort(failed.begin(), failed.end());
    for (std::int32_t d = 0; d < layout_.dp; ++d) {
      for (std::int32_t s = 0; s < layout_.pp; ++s) {
        if (std::binary_search(failed.begin(), failed.end(), WorkerId{d, s})) continue;
        index_[flat({d, s})] = static_cast<std::int32_t>(workers_.size());
        workers_.push_back(WorkerState{});
        workers_.back().id = {d, s};
      }
    }
    orders_.resize(workers_.size());
    for (std::int32_t owner = 0; owner < layout_.dp; ++owner) {
      for (std::int32_t s = 0; s < layout_.pp; ++s) {
        for (std::int32_t mb = 0; mb < layout_.microbatches; ++mb) {
          const std::int32_t w = worker_index(owner, s, mb);
          RECYCLE_ASSERT(w >= 0, "a micro-batch is routed to a failed worker");
          workers_[static_cast<std::size_t>(w)].remaining += 3;
          if (s == 0) workers_[static_cast<std::size_t>(w)].forward.push({0, mb, owner});
        }
      }
    }
  }

  ListScheduleResult run() {
    for (std::size_t w = 0; w < workers_.size(); ++w) refresh(static_cast<std::int32_t>(w));
    while (!heap_.empty()) {
      const Candidate c = heap_.top();
      heap_.pop();
      if (c.version != workers_[static_cast<std::size_t>(c.worker)].version) continue;
      execute(c);
    }
    ListScheduleResult out;
    out.makespan = makespan_;
    out.workers.reserve(workers_.size());
    for (std::size_t w = 0; w < workers_.size(); ++w) {
      RECYCLE_ASSERT(workers_[w].remaining == 0, "list scheduling stalled with work left");
      out.workers.push_back({workers_[w].id, std::move(orders_[w])});
    }
    return out;
  }

 private:
  std::size_t flat(WorkerId id) const {
    return static_cast<std::size_t>(id.dp) * static_cast<std::size_t>(layout_.pp) + static_cast<std::size_t>(id.stage);
  }
  std::size_t task(std::int32_t owner, std::int32_t stage, std::int32_t mb) const {
    return (static_cast<std::size_t>(owner) * static_cast<std::size_t>(layout_.pp) + static_cast<std::size_t>(stage)) *
               static_cast<std::size_t>(layout_.microbatches) +
           static_cast<std::size_t>(mb);
  }
  std::int32_t worker_index(std::int32_t owner, std::int32_t stage, std::int32_t mb) const {
    return index_[flat({routes_.dp_of(owner, stage, mb), stage})];
  }

  /// Recomputes the worker's best candidate and pushes it (older entries become stale).
  void refresh(std::int32_t w) {
    WorkerState& x = workers_[static_cast<std::size_t>(w)];
    ++x.version;
    bool found = false;
    Candidate best{};
    const auto consider = [&](Nanos start, std::int32_t priority) {
      const Candidate c{std::max(x.free_at, start), priority, w, x.version};
      if (!found || std::tie(c.start, c.priority) < std::tie(best.start, best.priority)) best = c;
      found = true;
    };
    const std::int32_t limit = in_.memory_limit[static_cast<std::size_t>(x.id.stage)];
    if (!x.input.empty()) consider(x.input.top().ready, kInput);
    if (!x.forward.empty() && x.held < limit) consider(x.forward.top().ready, kForward);
    const bool gradient_first =
        in_.wait_for_gradient && !x.input.empty() && x.input.top().ready < x.free_at + weight_cost(x.id.stage);
    if (!gradient_first) {
      if (!x.own_weight.empty()) consider(x.free_at, kOwnWeight);
      if (!x.rerouted_weight.empty()) consider(x.free_at, in_.defer_rerouted_w ? kReroutedWeight : kOwnWeight);
    }
    if (found) heap_.push(best);
  }

  Nanos weight_cost(std::int32_t stage) const {
    return in_.costs->duration(Action{ActionType::kBackwardWeight, stage, 0, 0});
  }

  void execute(const Candidate& c) {
    WorkerState& x = workers_[static_cast<std::size_t>(c.worker)];
    const std::int32_t s = x.id.stage;
    Ready r{};
    ActionType type = ActionType::kForward;
    switch (c.priority) {
      case kInput:
        r = x.input.top();
        x.input.pop();
        type = in_.fuse_backward ? ActionType::kBackward : ActionType::kBackwardInput;
        if (in_.fuse_backward) --x.held;
        break;
      case kForward:
        r = x.forward.top();
        x.forward.pop();
        ++x.held;
        break;
      default: {
        // Own Ws first; a re-routed W runs here only when no own W waits (or deferral is off).
        auto& queue = !x.own_weight.empty() ? x.own_weight : x.rerouted_weight;
        r = queue.front();
        queue.pop_front();
        --x.held;
        type = ActionType::kBackwardWeight;
      }
    }
    const Action action{type, s, r.microbatch, r.owner};
    const Nanos end = c.start + in_.costs->duration(action);
    x.free_at = end;
    makespan_ = std::max(makespan_, end);
    x.remaining -= type == ActionType::kBackward ? 2 : 1;
    orders_[static_cast<std::size_t>(c.worker)].push_back(action);

    std::int32_t other = -1;
    if (type == ActionType::kForward) {
      f_end_[task(r.owner, s, r.microbatch)] = end;
      if (s + 1 < layout_.pp) {
        other = worker_index(r.owner, s + 1, r.microbatch);
        workers_[static_cast<std::size_t>(other)].forward.push({end, r.microbatch, r.owner});
      } else {
        x.input.push({end, r.microbatch, r.owner});
      }
    } else if (type == ActionType::kBackwardInput || type == ActionType::kBackward) {
      if (type == ActionType::kBackwardInput) {
        (r.owner == x.id.dp ? x.own_weight : x.rerouted_weight).push_back({end, r.microbatch, r.owner});
      }
      if (s > 0) {
        other = worker_index(r.owner, s - 1, r.microbatch);
        // The upstream F ran before this stage's F, so its end is known.
        const Nanos f = f_end_[task(r.owner, s - 1, r.microbatch)];
        workers_[static_cast<std::size_t>(other)].input.push({std::max(end, f), r.microbatch, r.owner});
      }
    }
    refresh(c.worker);
    if (other >= 0 && other != c.worker) refresh(other);
  }

  const ListScheduleInput& in_;
  Layout layout_;
  RouteTable routes_;
  std::vector<Nanos> f_end_;
  std::vector<std::int32_t> index_;  ///< flat worker id -> index in workers_, -1 if failed
  std::vector<WorkerState> workers_;
  std::vector<std::vector<Action>> orders_;
  Nanos makespan_ = 0;
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap_;
};

}  // namespace

ListScheduleResult list_schedule(const ListScheduleInput& input) {
  RECYCLE_ASSERT(input.skeleton != nullptr && input.costs != nullptr, "list_schedule needs a skeleton and costs");
  RECYCLE_ASSERT(input.memory_limit.size() == static_cast<std::size_t>(input.skeleton->layout.pp),
                 "one memory limit per stage");
  for (const std::int32_t limit : input.memory_limit) RECYCLE_ASSERT(limit >= 1, "memory limit below one micro-batch");
  return Scheduler(input).run();
}

std::vector<std::int32_t> uniform_limit(const Layout& layout, std::int32_t limit) {
  return std::vector<std::int32_t>(static_cast<std::size_t>(layout.pp), limit);
}

std::vector<std::int32_t> one_f_one_b_limit(const Layout& layout) {
  std::vector<std::int32_t> limit(static_cast<std::size_t>(layout.pp));
  for (std::int32_t s = 0; s < layout.pp; ++s) limit[static_cast<std::size_t>(s)] = layout.pp - s;
  return limit;
}

}  // namespace recycle::planner
