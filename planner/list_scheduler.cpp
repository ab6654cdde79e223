#include "planner/list_scheduler.hpp"

#include <algorithm>
#include <deque>
#include <optional>
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
  ReadyHeap forward, input;
  std::deque<Ready> own_weight, rerouted_weight;
};

/// What a worker would run next: ordered by start, then priority, then worker index.
struct Candidate {
  Nanos start = 0;
  std::int32_t priority = 0;
  std::int32_t worker = 0;
  /// start and priority in one integer (priority < 4), so a comparison is two integer compares.
  [[nodiscard]] std::int64_t key() const noexcept { return start * 4 + priority; }
  friend bool operator>(const Candidate& a, const Candidate& b) {
    const std::int64_t ka = a.key(), kb = b.key();
    return ka != kb ? ka > kb : a.worker > b.worker;
  }
};

/// A binary min-heap holding at most one candidate per worker, updated in place: the heap stays as
/// small as the number of workers (a lazy heap of stale entries grows with the number of actions).
class CandidateHeap {
 public:
  explicit CandidateHeap(std::size_t workers) : position_(workers, kAbsent) {}

  [[nodiscard]] bool empty() const noexcept { return heap_.empty(); }
  [[nodiscard]] const Candidate& top() const noexcept { return heap_.front(); }

  /// Inserts, replaces or (with nullopt) removes the worker's candidate.
  void set(std::int32_t worker, const std::optional<Candidate>& c) {
    const std::size_t w = static_cast<std::size_t>(worker);
    if (position_[w] == kAbsent) {
      if (!c) return;
      position_[w] = heap_.size();
      heap_.push_back(*c);
      up(heap_.size() - 1);
      return;
    }
    const std::size_t i = position_[w];
    if (!c) {
      swap_nodes(i, heap_.size() - 1);
      heap_.pop_back();
      position_[w] = kAbsent;
      if (i < heap_.size()) {
        up(i);
        down(i);
      }
      return;
    }
    heap_[i] = *c;
    up(i);
    down(i);
  }

 private:
  static constexpr std::size_t kAbsent = static_cast<std::size_t>(-1);

  void swap_nodes(std::size_t a, std::size_t b) {
    std::swap(heap_[a], heap_[b]);
    position_[static_cast<std::size_t>(heap_[a].worker)] = a;
    position_[static_cast<std::size_t>(heap_[b].worker)] = b;
  }
  // A 4-ary heap: half the depth of a binary one, and the four children share a cache line or two.
  static constexpr std::size_t kArity = 4;
  void up(std::size_t i) {
    while (i > 0 && heap_[(i - 1) / kArity] > heap_[i]) {
      swap_nodes(i, (i - 1) / kArity);
      i = (i - 1) / kArity;
    }
  }
  void down(std::size_t i) {
    while (true) {
      std::size_t smallest = i;
      const std::size_t first = kArity * i + 1;
      const std::size_t last = std::min(first + kArity, heap_.size());
      for (std::size_t child = first; child < last; ++child) {
        if (heap_[smallest] > heap_[child]) smallest = child;
      }
      if (smallest == i) return;
      swap_nodes(i, smallest);
      i = smallest;
    }
  }

  std::vector<Candidate> heap_;
  std::vector<std::size_t> position_;
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
    heap_ = CandidateHeap(workers_.size());
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
    while (!heap_.empty()) execute(heap_.top());
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
    return static_cast<std::size_t>(id.dp) * static_cast<std::size_t>(layout_.pp) +
           static_cast<std::size_t>(id.stage);
  }
  std::size_t task(std::int32_t owner, std::int32_t stage, std::int32_t mb) const {
    return (static_cast<std::size_t>(owner) * static_cast<std::size_t>(layout_.pp) +
            static_cast<std::size_t>(stage)) *
               static_cast<std::size_t>(layout_.microbatches) +
           static_cast<std::size_t>(mb);
  }
  std::int32_t worker_index(std::int32_t owner, std::int32_t stage, std::int32_t mb) const {
    return index_[flat({routes_.dp_of(owner, stage, mb), stage})];
  }

  /// Recomputes the worker's best candidate.
  void refresh(std::int32_t w) {
    WorkerState& x = workers_[static_cast<std::size_t>(w)];
    bool found = false;
    Candidate best{};
    const auto consider = [&](Nanos start, std::int32_t priority) {
      const Candidate c{std::max(x.free_at, start), priority, w};
      if (!found || c.key() < best.key()) best = c;
      found = true;
    };
    const std::int32_t limit = in_.memory_limit[static_cast<std::size_t>(x.id.stage)];
    if (!x.input.empty()) consider(x.input.top().ready, kInput);
    if (!x.forward.empty() && x.held < limit) consider(x.forward.top().ready, kForward);
    const bool gradient_first = in_.wait_for_gradient && !x.input.empty() &&
                                x.input.top().ready < x.free_at + weight_cost(x.id.stage);
    if (!gradient_first) {
      if (!x.own_weight.empty()) consider(x.free_at, kOwnWeight);
      if (!x.rerouted_weight.empty())
        consider(x.free_at, in_.defer_rerouted_w ? kReroutedWeight : kOwnWeight);
    }
    heap_.set(w, found ? std::optional<Candidate>(best) : std::nullopt);
  }

  Nanos weight_cost(std::int32_t stage) const {
    return in_.costs->duration(Action{ActionType::kBackwardWeight, stage, 0, 0});
  }

  void execute(const Candidate candidate) {
    const Candidate& c = candidate;  // a copy: refresh() below overwrites the heap's top
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
        (r.owner == x.id.dp ? x.own_weight : x.rerouted_weight)
            .push_back({end, r.microbatch, r.owner});
      }
      if (s > 0) {
        other = worker_index(r.owner, s - 1, r.microbatch);
        // The upstream F ran before this stage's F, so its end is known.
        const Nanos f = f_end_[task(r.owner, s - 1, r.microbatch)];
        workers_[static_cast<std::size_t>(other)].input.push(
            {std::max(end, f), r.microbatch, r.owner});
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
  CandidateHeap heap_{0};
};

}  // namespace

ListScheduleResult list_schedule(const ListScheduleInput& input) {
  RECYCLE_ASSERT(input.skeleton != nullptr && input.costs != nullptr,
                 "list_schedule needs a skeleton and costs");
  RECYCLE_ASSERT(input.memory_limit.size() == static_cast<std::size_t>(input.skeleton->layout.pp),
                 "one memory limit per stage");
  for (const std::int32_t limit : input.memory_limit)
    RECYCLE_ASSERT(limit >= 1, "memory limit below one micro-batch");
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
