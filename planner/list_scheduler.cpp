#include "planner/list_scheduler.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <memory>

#include "core/error.hpp"
#include "planner/language/execution_graph.hpp"
#include "planner/language/semantics.hpp"

namespace recycle::planner {

namespace {

enum Priority : std::int32_t { kInput = 0, kForward = 1, kOwnWeight = 2, kReroutedWeight = 3 };

/// A micro-batch of some owner, ready to run from `ready` on (ties: ListScheduleInput::rank).
struct Ready {
  Nanos ready = 0;
  std::int32_t microbatch = 0;
  std::int32_t owner = 0;
  std::int32_t virtual_stage = 0;
};

/// A FIFO holding only what is in it: a power-of-two ring that doubles when full. A worker's
/// queue holds a few items at a time though thousands pass through it, so the memory scheduling
/// touches stays small (one array sized for all that passes through every queue spread each
/// worker's few live items over tens of megabytes at 16,384 GPUs).
template <typename T>
class Ring {
 public:
  [[nodiscard]] bool empty() const noexcept { return head_ == tail_; }
  [[nodiscard]] const T& front() const noexcept { return buf_[head_ & mask_]; }
  T pop_front() noexcept { return buf_[head_++ & mask_]; }
  void push_back(const T& item) {
    grow_if_full();
    buf_[tail_++ & mask_] = item;
  }
  /// Inserts `item` before the items at the back that `before(item, that)` says it precedes.
  template <typename Before>
  void insert_from_back(const T& item, const Before& before) {
    grow_if_full();
    std::uint32_t i = tail_++;
    while (i != head_ && before(item, buf_[(i - 1) & mask_])) {
      buf_[i & mask_] = buf_[(i - 1) & mask_];
      --i;
    }
    buf_[i & mask_] = item;
  }

 private:
  // The counters wrap: a power-of-two capacity divides 2^32, so `counter & mask_` stays the slot
  // and `tail_ - head_` the count.
  void grow_if_full() {
    if (buf_ != nullptr && tail_ - head_ <= mask_) return;
    const std::uint32_t size = buf_ == nullptr ? 4 : 2 * (mask_ + 1);
    RECYCLE_ASSERT(size != 0, "list scheduling: a queue of 2^32 items");
    auto bigger = std::make_unique<T[]>(size);
    std::uint32_t n = 0;
    for (std::uint32_t k = head_; k != tail_; ++k) bigger[n++] = buf_[k & mask_];
    head_ = 0;
    tail_ = n;
    buf_ = std::move(bigger);
    mask_ = size - 1;
  }

  std::unique_ptr<T[]> buf_;
  std::uint32_t head_ = 0;  ///< items taken out so far, mod 2^32
  std::uint32_t tail_ = 0;  ///< items put in so far, mod 2^32
  std::uint32_t mask_ = 0;  ///< capacity - 1
};

/// A W waiting to run: FIFO, in the order its I ran.
struct Weight {
  std::int32_t microbatch = 0;
  std::int32_t owner = 0;
  std::int32_t virtual_stage = 0;
};

/// A worker's state. At 2,048 workers the scheduler's time goes to loading it, so it fills three
/// cache lines exactly: what refresh() and execute() read on every action (times, counts, the
/// input queue), then the forward queues, then the weight queues.
struct alignas(64) WorkerState {
  Nanos free_at = 0;
  std::int64_t candidate = -1;  ///< its candidate's key, -1 if none
  std::uint32_t version = 0;    ///< bumped whenever the candidate changes
  std::int32_t held = 0;        ///< chunks of activations
  /// Forwards still to run here for micro-batches whose first chunk here ran (several chunks a
  /// worker): room kept for them, so a micro-batch is let in only when all of its chunks fit.
  std::int32_t reserved = 0;
  std::int32_t limit = 0;  ///< chunks of activations it may hold
  /// Forward and input queues, ordered by (ready, rank). Items arrive almost in
  /// that order: every action of a stage costs the same and actions start in time order, so an
  /// insertion from the back rarely moves more than a tie. `forward` holds the Fs of a worker's
  /// first chunk (each lets a micro-batch in), `later` those of its other chunks.
  Ring<Ready> input;
  Nanos remaining_time = 0;  ///< the durations of the actions still to place, summed
  Ring<Ready> forward, later;
  std::int64_t remaining = 0;  ///< actions still to place
  std::int64_t node = -1;      ///< the node it lies wholly on, or -1 (Cluster::same_node)
  Ring<Weight> own_weight, rerouted_weight;  ///< FIFO: Ws run in the order their Is ran
  WorkerId id;
};
static_assert(sizeof(WorkerState) == 192);

/// What a worker would run next: its start and priority in one integer (priority < 4).
std::int64_t candidate_key(Nanos start, std::int32_t priority) {
  return start * 4 + priority;
}
Nanos start_of(std::int64_t key) {
  return key >> 2;
}
std::int32_t priority_of(std::int64_t key) {
  return static_cast<std::int32_t>(key & 3);
}

/// The candidates, by key: a radix heap over hexadecimal digits. Keys taken out never decrease
/// (actions start in time order), so an entry is filed by the highest digit where its key differs
/// from the last key taken out, and that digit's value (bucket 0: equal keys); a push is O(1), and
/// an entry is refiled at most once per digit, into a lower one each time. Entries are never
/// changed in place: a worker's newer candidate is pushed again, and an older one is dropped when
/// it surfaces because its version is stale.
///
/// Entries of one key always share a bucket and keep the order they were pushed in, so among equal
/// keys the one pushed last comes out first. That order matters only where an action takes no
/// time or a worker looks ahead at gradients on their way (ListScheduleInput::wait_for_gradient,
/// forward_waits_for_gradient): otherwise an action starting at t only makes work ready after t,
/// and actions that can start at t do not affect one another.
class CandidateQueue {
 public:
  struct Entry {
    std::int64_t key = 0;
    std::int32_t worker = 0;
    std::uint32_t version = 0;
  };

  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }

  /// A key below the last one taken out (a zero-time action made work ready at once) is filed as
  /// the last one: it comes out next.
  void push(Entry e) {
    e.key = std::max(e.key, last_);
    file(e);
    ++size_;
  }

  Entry pop() {
    if (buckets_[0].empty()) {
      // The lowest bucket that holds entries holds the least keys: the least becomes the last
      // key, and every entry there goes to a lower bucket.
      std::size_t i = 0;
      while (nonempty_[i / 64] == 0) i += 64;
      i += static_cast<std::size_t>(std::countr_zero(nonempty_[i / 64]));
      std::vector<Entry>& from = buckets_[i];
      nonempty_[i / 64] &= ~(std::uint64_t{1} << (i % 64));
      last_ = std::min_element(from.begin(), from.end(), [](const Entry& a, const Entry& b) {
                return a.key < b.key;
              })->key;
      for (const Entry& e : from) file(e);
      from.clear();
    }
    const Entry e = buckets_[0].back();
    buckets_[0].pop_back();
    --size_;
    return e;
  }

 private:
  static constexpr std::size_t kDigits = 16;  ///< hexadecimal digits of a 64-bit key
  static constexpr std::size_t kBuckets = kDigits * 16;

  /// Bucket 16 d + v: the highest digit where the key differs from last_ is d, and its value
  /// there is v (> last_'s, so bucket 0 holds only keys equal to it).
  void file(const Entry& e) {
    std::size_t b = 0;
    if (e.key != last_) {
      const auto diff = static_cast<std::uint64_t>(e.key ^ last_);
      const auto digit = static_cast<std::size_t>(63 - std::countl_zero(diff)) / 4;
      b = digit * 16 + ((static_cast<std::uint64_t>(e.key) >> (4 * digit)) & 15);
      nonempty_[b / 64] |= std::uint64_t{1} << (b % 64);
    }
    buckets_[b].push_back(e);
  }

  std::array<std::vector<Entry>, kBuckets> buckets_;
  std::array<std::uint64_t, kBuckets / 64> nonempty_{};  ///< buckets 1 and up that hold entries
  std::int64_t last_ = 0;
  std::size_t size_ = 0;
};

class Scheduler {
 public:
  explicit Scheduler(const ListScheduleInput& in)
      : in_(in),
        layout_(in.skeleton->layout),
        routes_(*in.skeleton),
        charged_(in.network != nullptr && !in.network->cluster.free()) {
    const std::int32_t last = layout_.virtual_stages() - 1;
    for (std::int32_t v = 0; v <= last; ++v) {
      forward_cost_.push_back(in.costs->duration({ActionType::kForward, v, 0, 0}));
      input_cost_.push_back(in.costs->duration({ActionType::kBackwardInput, v, 0, 0}));
      weight_cost_.push_back(in.costs->duration({ActionType::kBackwardWeight, v, 0, 0}));
      backward_cost_.push_back(in.costs->duration({ActionType::kBackward, v, 0, 0}));
      for (const ActionType type : kMade) {
        // Only the readers whose last input this is: those it makes ready.
        DataConsumers ready;
        for (const DataConsumer& c : consumers_of(type, v, last)) {
          if (c.completes) ready.consumers[static_cast<std::size_t>(ready.count++)] = c;
        }
        readers_.push_back(ready);
      }
    }
    sent_.assign(4 * static_cast<std::size_t>(layout_.virtual_stages()), -1);
    index_.assign(static_cast<std::size_t>(layout_.workers()), -1);
    std::vector<WorkerId> failed = in.skeleton->failed;
    std::sort(failed.begin(), failed.end());
    choose_stand_ins(failed);
    for (std::int32_t d = 0; d < layout_.dp; ++d) {
      if (stand_in_[static_cast<std::size_t>(d)] != d) continue;
      for (std::int32_t s = 0; s < layout_.pp; ++s) {
        if (std::binary_search(failed.begin(), failed.end(), WorkerId{d, s})) continue;
        index_[flat({d, s})] = static_cast<std::int32_t>(workers_.size());
        WorkerState& x = workers_.emplace_back();
        x.id = {d, s};
        if (charged_) {
          const Cluster& cluster = in.network->cluster;
          const std::int64_t node = cluster.first_node(x.id);
          x.node = cluster.last_node(x.id) == node ? node : -1;
        }
        x.limit = in.memory_limit[static_cast<std::size_t>(s)];
      }
    }
    // The chunks each worker runs, own and re-routed; the time it still has to compute, per
    // chunk.
    std::vector<std::size_t> own(workers_.size(), 0), rerouted(workers_.size(), 0);
    for (std::int32_t owner = 0; owner < layout_.dp; ++owner) {
      if (stand_in_[static_cast<std::size_t>(owner)] != owner) continue;
      for (std::int32_t v = 0; v <= last; ++v) {
        const auto vi = static_cast<std::size_t>(v);
        // Saturated at kMaxClock, so that it stays a lower bound and `end + remaining_time` fits.
        const Nanos per_chunk = std::min(
            kMaxClock,
            forward_cost_[vi] + (in.fuse_backward
                                     ? backward_cost_[vi]
                                     : std::min(kMaxClock, input_cost_[vi] + weight_cost_[vi])));
        for (std::int32_t mb = 0; mb < layout_.microbatches; ++mb) {
          const std::int32_t w = worker_index(owner, v, mb);
          RECYCLE_ASSERT(w >= 0, "a micro-batch is routed to a failed worker");
          const auto i = static_cast<std::size_t>(w);
          ++(owner == workers_[i].id.dp ? own : rerouted)[i];
          workers_[i].remaining_time = std::min(kMaxClock, workers_[i].remaining_time + per_chunk);
        }
      }
    }
    for (std::size_t w = 0; w < workers_.size(); ++w) {
      workers_[w].remaining = 3 * static_cast<std::int64_t>(own[w] + rerouted[w]);
    }
    if (!in_.makespan_only) {
      orders_.resize(workers_.size());
      for (std::size_t w = 0; w < workers_.size(); ++w) {
        orders_[w].reserve(static_cast<std::size_t>(workers_[w].remaining));
      }
    }
    for (std::int32_t owner = 0; owner < layout_.dp; ++owner) {
      if (stand_in_[static_cast<std::size_t>(owner)] != owner) continue;
      for (std::int32_t mb = 0; mb < layout_.microbatches; ++mb) {
        push_ready(workers_[static_cast<std::size_t>(worker_index(owner, 0, mb))].forward,
                   {0, mb, owner, 0});
      }
    }
  }

  ListScheduleResult run() {
    for (std::size_t w = 0; w < workers_.size(); ++w) refresh(static_cast<std::int32_t>(w));
    while (!queue_.empty()) {
      const CandidateQueue::Entry e = queue_.pop();
      WorkerState& x = workers_[static_cast<std::size_t>(e.worker)];
      if (e.version != x.version) continue;  // superseded
      const std::int64_t key = x.candidate;
      x.candidate = -1;  // taken out: refresh() queues the next one
      execute(e.worker, key);
      if (in_.give_up_at < kMaxClock && bound_ >= in_.give_up_at) return {{}, bound_, true};
    }
    ListScheduleResult out;
    out.makespan = makespan_;
    for (const WorkerState& x : workers_)
      RECYCLE_ASSERT(x.remaining == 0, "list scheduling stalled with work left");
    if (in_.makespan_only) return out;
    // Every live worker in (dp, stage) order; a stood-in pipeline gets its stand-in's lists
    // under its own name. A stand-in comes before the pipelines it stands for (it is the lowest of
    // them), and is moved out last.
    out.workers.reserve(static_cast<std::size_t>(layout_.workers()) - in_.skeleton->failed.size());
    for (std::int32_t d = 0; d < layout_.dp; ++d) {
      const std::int32_t from = stand_in_[static_cast<std::size_t>(d)];
      for (std::int32_t s = 0; s < layout_.pp; ++s) {
        const std::int32_t w = index_[flat({from, s})];
        if (w < 0) continue;  // failed
        std::vector<Action>& order = orders_[static_cast<std::size_t>(w)];
        if (from == d) {
          out.workers.push_back(
              {{d, s},
               last_stood_for_[static_cast<std::size_t>(d)] == d ? std::move(order) : order});
          continue;
        }
        std::vector<Action> copy =
            last_stood_for_[static_cast<std::size_t>(from)] == d ? std::move(order) : order;
        for (Action& a : copy) a.owner = d;
        out.workers.push_back({{d, s}, std::move(copy)});
      }
    }
    return out;
  }

 private:
  /// Pipelines that neither lost a worker nor run another's micro-batch are independent of all
  /// others, and two of them whose stages pair up on nodes alike and whose micro-batches rank
  /// alike get the same lists (owner aside): the lowest of each such class is scheduled and
  /// stands in for the rest. At 16,384 GPUs a failure set touches a few of 128 pipelines.
  void choose_stand_ins(const std::vector<WorkerId>& failed) {
    const auto dp = static_cast<std::size_t>(layout_.dp);
    std::vector<char> touched(dp, 0);
    for (const WorkerId& f : failed) touched[static_cast<std::size_t>(f.dp)] = 1;
    for (const Route& r : in_.skeleton->routes) {
      touched[static_cast<std::size_t>(r.owner)] = 1;
      touched[static_cast<std::size_t>(r.dp)] = 1;
    }
    stand_in_.resize(dp);
    last_stood_for_.resize(dp);
    std::map<std::vector<std::int32_t>, std::int32_t> classes;
    std::vector<std::int32_t> signature;
    for (std::int32_t d = 0; d < layout_.dp; ++d) {
      const auto i = static_cast<std::size_t>(d);
      stand_in_[i] = d;
      last_stood_for_[i] = d;
      if (touched[i] || !in_.stand_ins) continue;
      signature.clear();
      if (charged_) {
        const Cluster& cluster = in_.network->cluster;
        for (std::int32_t s = 0; s + 1 < layout_.pp; ++s) {
          const std::int64_t node = cluster.first_node({d, s});
          signature.push_back(cluster.last_node({d, s}) == node &&
                              cluster.first_node({d, s + 1}) == node &&
                              cluster.last_node({d, s + 1}) == node);
        }
      }
      if (!in_.rank.empty()) {
        const auto m = static_cast<std::size_t>(layout_.microbatches);
        std::vector<std::int32_t> by_rank(m);
        for (std::size_t mb = 0; mb < m; ++mb) by_rank[mb] = static_cast<std::int32_t>(mb);
        std::sort(by_rank.begin(), by_rank.end(), [&](std::int32_t a, std::int32_t b) {
          return in_.rank[i * m + static_cast<std::size_t>(a)] <
                 in_.rank[i * m + static_cast<std::size_t>(b)];
        });
        signature.insert(signature.end(), by_rank.begin(), by_rank.end());
      }
      const auto [it, fresh] = classes.try_emplace(signature, d);
      stand_in_[i] = it->second;
      last_stood_for_[static_cast<std::size_t>(it->second)] = d;
    }
  }

  std::size_t flat(WorkerId id) const { return layout_.index(id); }
  /// The index of the worker that runs `owner`'s micro-batch `mb` at `virtual_stage`.
  std::int32_t worker_index(std::int32_t owner, std::int32_t virtual_stage, std::int32_t mb) const {
    return index_[flat(routes_.worker_of(owner, virtual_stage, mb))];
  }

  std::int64_t rank(const Ready& r) const {
    return in_.rank.empty() ? static_cast<std::int64_t>(r.microbatch) * layout_.dp + r.owner
                            : in_.rank[static_cast<std::size_t>(r.owner) *
                                           static_cast<std::size_t>(layout_.microbatches) +
                                       static_cast<std::size_t>(r.microbatch)];
  }
  bool before(const Ready& a, const Ready& b) const {
    return a.ready != b.ready ? a.ready < b.ready : rank(a) < rank(b);
  }

  /// How long what `made` produced on worker `from` takes to reach worker `to` (indices). The
  /// time depends only on the action's type and stage and on whether the two workers share a
  /// node: each is computed once.
  Nanos arrival(const Action& made, std::int32_t from, std::int32_t to) {
    if (!charged_ || from == to) return 0;
    const auto f = static_cast<std::size_t>(from), t = static_cast<std::size_t>(to);
    const bool near = workers_[f].node >= 0 && workers_[f].node == workers_[t].node;
    Nanos& memo = sent_[4 * static_cast<std::size_t>(made.virtual_stage) +
                        (made.type == ActionType::kForward ? 0 : 2) + (near ? 1 : 0)];
    if (memo < 0) {
      const auto send = output_of(made, layout_.virtual_stages() - 1);
      memo = send ? in_.network->cluster.transfer_time(workers_[f].id, workers_[t].id,
                                                       in_.network->send_bytes(*send))
                  : 0;
    }
    return memo;
  }

  /// Inserts by (ready, rank), from the back.
  void push_ready(Ring<Ready>& q, const Ready& r) {
    if (r.ready >= kMaxClock) refuse_clock(kUnnamedSchedule);  // a transfer past the clock's end
    q.insert_from_back(r, [this](const Ready& a, const Ready& b) { return before(a, b); });
  }

  /// The forward a worker would run next: the head of `later` (room for it is kept) or of
  /// `forward` (which lets a new micro-batch in: only when all its chunks fit beside the held and
  /// kept ones), whichever is ready first, `later` on ties; nullptr when neither may run.
  Ring<Ready>* next_forward(WorkerState& x) {
    Ring<Ready>* pick = nullptr;
    Nanos at = 0;
    const auto offer = [&](Ring<Ready>& q, bool room) {
      if (q.empty() || !room) return;
      const Nanos t = std::max(x.free_at, q.front().ready);
      if (pick == nullptr || t < at) {
        pick = &q;
        at = t;
      }
    };
    offer(x.later, x.held < x.limit);
    offer(x.forward, x.held + x.reserved + std::int64_t{layout_.interleave} <= x.limit);
    return pick;
  }
  /// The W a worker would run next: its own first (re-routed ones only when none waits).
  Ring<Weight>& next_weight(WorkerState& x) {
    return !x.own_weight.empty() ? x.own_weight : x.rerouted_weight;
  }

  /// Recomputes the worker's best candidate and queues it if it changed.
  void refresh(std::int32_t w) {
    WorkerState& x = workers_[static_cast<std::size_t>(w)];
    std::int64_t best = -1;
    const auto consider = [&](Nanos start, std::int32_t priority) {
      const std::int64_t key = candidate_key(std::max(x.free_at, start), priority);
      if (best < 0 || key < best) best = key;
    };
    if (!x.input.empty()) consider(x.input.front().ready, kInput);
    if (const Ring<Ready>* f = next_forward(x)) {
      const Ready& head = f->front();
      const bool forward_waits =
          in_.forward_waits_for_gradient && !x.input.empty() &&
          x.input.front().ready < std::max(x.free_at, head.ready) +
                                      forward_cost_[static_cast<std::size_t>(head.virtual_stage)];
      if (!forward_waits) consider(head.ready, kForward);
    }
    if (!x.own_weight.empty() || !x.rerouted_weight.empty()) {
      const Weight& next = next_weight(x).front();
      const bool gradient_first =
          in_.wait_for_gradient && !x.input.empty() &&
          x.input.front().ready <
              x.free_at + weight_cost_[static_cast<std::size_t>(next.virtual_stage)];
      if (!gradient_first) {
        if (!x.own_weight.empty()) consider(x.free_at, kOwnWeight);
        if (!x.rerouted_weight.empty())
          consider(x.free_at, in_.defer_rerouted_w ? kReroutedWeight : kOwnWeight);
      }
    }
    if (best == x.candidate) return;
    x.candidate = best;
    ++x.version;
    if (best >= 0) queue_.push({best, w, x.version});
  }

  void execute(std::int32_t worker, std::int64_t key) {
    WorkerState& x = workers_[static_cast<std::size_t>(worker)];
    std::int32_t mb = 0, owner = 0, v = 0;
    ActionType type = ActionType::kForward;
    Nanos duration = 0;
    switch (priority_of(key)) {
      case kInput: {
        const Ready r = x.input.pop_front();
        mb = r.microbatch;
        owner = r.owner;
        v = r.virtual_stage;
        if (in_.fuse_backward) {
          type = ActionType::kBackward;
          duration = backward_cost_[static_cast<std::size_t>(v)];
          --x.held;
        } else {
          type = ActionType::kBackwardInput;
          duration = input_cost_[static_cast<std::size_t>(v)];
        }
        break;
      }
      case kForward: {
        // The same choice refresh() made: nothing changed the worker since.
        Ring<Ready>* q = next_forward(x);
        RECYCLE_ASSERT(q != nullptr, "list scheduling: a forward candidate with none to run");
        const Ready r = q->pop_front();
        mb = r.microbatch;
        owner = r.owner;
        v = r.virtual_stage;
        duration = forward_cost_[static_cast<std::size_t>(v)];
        ++x.held;
        // A micro-batch let in keeps room for its other chunks here; each of them uses its room.
        x.reserved += q == &x.forward ? layout_.interleave - 1 : -1;
        break;
      }
      default: {
        // Own Ws first; a re-routed W runs here only when no own W waits (or deferral is off).
        const Weight r = next_weight(x).pop_front();
        mb = r.microbatch;
        owner = r.owner;
        v = r.virtual_stage;
        --x.held;
        type = ActionType::kBackwardWeight;
        duration = weight_cost_[static_cast<std::size_t>(v)];
      }
    }
    const Nanos end = start_of(key) + duration;
    // Every time here stays below kMaxClock, so a candidate's key (start x 4) fits in 63 bits.
    if (end >= kMaxClock) refuse_clock(kUnnamedSchedule);
    x.free_at = end;
    makespan_ = std::max(makespan_, end);
    x.remaining_time -= duration;
    bound_ = std::max(bound_, end + x.remaining_time);
    x.remaining -= type == ActionType::kBackward ? 2 : 1;
    if (!in_.makespan_only)
      orders_[static_cast<std::size_t>(worker)].push_back({type, v, mb, owner});

    // What this action made reaches its readers (planner/language/semantics.hpp, consumers_of); a
    // reader is ready when the last of its inputs is made. The input queue holds a chunk's I, or
    // its B when backwards are fused, and the weight queues its W after an I.
    const Action made{type, v, mb, owner};
    const ActionType gradient_reader =
        in_.fuse_backward ? ActionType::kBackward : ActionType::kBackwardInput;
    std::int32_t other = -1;
    for (const DataConsumer& c :
         readers_[static_cast<std::size_t>(v) * kMade.size() + made_kind(type)]) {
      const std::int32_t reader = c.same_worker ? worker : worker_index(owner, c.virtual_stage, mb);
      WorkerState& r = workers_[static_cast<std::size_t>(reader)];
      const Ready item{end + arrival(made, worker, reader), mb, owner, c.virtual_stage};
      if (c.type == ActionType::kForward) {
        push_ready(layout_.chunk_of(c.virtual_stage) == 0 ? r.forward : r.later, item);
      } else if (c.type == gradient_reader) {
        push_ready(r.input, item);
      } else if (c.type == ActionType::kBackwardWeight && type == ActionType::kBackwardInput) {
        (owner == r.id.dp ? r.own_weight : r.rerouted_weight)
            .push_back({mb, owner, c.virtual_stage});
      } else {
        continue;
      }
      if (reader != worker) other = reader;
    }
    refresh(worker);
    if (other >= 0 && other != worker) refresh(other);
  }

  /// The compute actions the scheduler makes, in the order readers_ keeps their readers.
  static constexpr std::array<ActionType, 4> kMade{ActionType::kForward, ActionType::kBackwardInput,
                                                   ActionType::kBackwardWeight,
                                                   ActionType::kBackward};
  static std::size_t made_kind(ActionType type) {
    return static_cast<std::size_t>(std::find(kMade.begin(), kMade.end(), type) - kMade.begin());
  }

  const ListScheduleInput& in_;
  Layout layout_;
  RouteTable routes_;
  bool charged_ = false;  ///< transfers take time
  std::vector<Nanos> forward_cost_, input_cost_, weight_cost_, backward_cost_;  ///< per stage
  /// Per stage and kind of action made (kMade): the readers it makes ready (consumers_of).
  std::vector<DataConsumers> readers_;
  /// arrival() per stage, (F or I/B) x (other node or same node); -1 until computed
  std::vector<Nanos> sent_;
  std::vector<std::int32_t> index_;  ///< flat worker id -> index in workers_, -1 if not scheduled
  std::vector<std::int32_t> stand_in_;  ///< per pipeline: the pipeline scheduled for it
  /// per stand-in: the highest pipeline it stands for (its lists are moved out there)
  std::vector<std::int32_t> last_stood_for_;
  std::vector<WorkerState> workers_;
  std::vector<std::vector<Action>> orders_;
  Nanos makespan_ = 0;
  /// The makespan is at least this: a worker ends no earlier than it is free plus the durations
  /// of what it still has to run.
  Nanos bound_ = 0;
  CandidateQueue queue_;
};

}  // namespace

ListScheduleResult list_schedule(const ListScheduleInput& input) {
  RECYCLE_ASSERT(input.skeleton != nullptr && input.costs != nullptr,
                 "list_schedule needs a skeleton and costs");
  const Layout& layout = input.skeleton->layout;
  RECYCLE_ASSERT(input.memory_limit.size() == static_cast<std::size_t>(layout.pp),
                 "one memory limit per stage");
  RECYCLE_ASSERT(
      input.rank.empty() || input.rank.size() == static_cast<std::size_t>(layout.dp) *
                                                     static_cast<std::size_t>(layout.microbatches),
      "one rank per micro-batch of every pipeline");
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

std::vector<std::int32_t> chunk_limits(const Layout& layout,
                                       std::vector<std::int32_t> microbatches) {
  for (std::int32_t& l : microbatches)
    l = static_cast<std::int32_t>(chunk_limit(l, layout.interleave));
  return microbatches;
}

}  // namespace recycle::planner
