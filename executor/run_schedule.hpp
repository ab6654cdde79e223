// The runtime's one definition, for every backend: how a worker walks its lowered action list,
// where its inputs come from, where its outputs go (the schedule's routes), how the stage's
// replicas reduce their gradients, and how a kill is found, dropped and recovered from
// (executor/runtime.hpp says what each of these does). A backend supplies only the arithmetic and
// the data movement, each operation finished when it returns so that the runtime's clock brackets
// it:
//
//   struct Backend {
//     using Tensor;  // an activation, a gradient, a stage's parameters (movable)
//     using Stage;   // one virtual stage's parameters and gradients (copyable: snapshots)
//     using Chunk;   // what one micro-batch keeps from its F until its W
//     using Reduce;  // an all-reduce over a stage's live replicas
//     void enter(std::size_t w);  // on worker w's thread, before it runs
//     void connect(std::size_t from, std::size_t to);  // before any thread runs: w `from` will
//                                                      // SEND to w `to`
//     Stage make_stage(std::size_t w, const StageShape&, std::int32_t v, std::uint64_t seed);
//     void load(std::vector<std::vector<float>> inputs,
//               std::vector<std::vector<float>> targets);  // before the clock starts
//     const Tensor& input(std::size_t w, std::size_t slot);   // the first stage's input
//     const Tensor& target(std::size_t w, std::size_t slot);  // the last stage's target
//     Tensor send(Tensor data, std::size_t from, std::size_t to);  // the SEND's transfer
//     double loss(std::size_t w, const Tensor& out, const Tensor& target, Tensor& gradient);
//     std::unique_ptr<Reduce> make_reduce(std::vector<std::size_t> ranks, Abort&);
//     std::vector<float> download(const Tensor&);
//     // Across processes (a multi-process run, executor/peers.hpp) data travels as host floats:
//     std::vector<float> into_host(Tensor data);  // a SEND's data, for another process
//     Tensor from_host(std::size_t w, std::vector<float> data);  // another's, for worker w
//     void on_host(Tensor& data, F f);  // f(std::vector<float>&) on `data`'s contents, in place
//   };
//   Stage: forward(const Tensor&, Chunk&) -> Tensor; backward_input(const Tensor&, Chunk&) ->
//   Tensor; backward_weight(const Chunk&); step(learning_rate, microbatches); gradients() ->
//   Tensor&; parameters() -> const Tensor&.
//   Reduce: all_reduce(rank, Tensor&, what).
// Worker w is the index of the worker in the run's first schedule (kept across kills), ranks of a
// Reduce are given as such indices in rank order. With peers, the gradient all-reduces and the
// optimizer barrier go by message (executor/message_reduce.hpp) through host mailboxes of their
// own, and a SEND to another process's worker through the peers; the cpu backend's tensors are
// host floats already, so its into_host, from_host and on_host move nothing.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "executor/channels.hpp"
#include "executor/cpu_pin.hpp"
#include "executor/footprint.hpp"
#include "executor/heartbeat.hpp"
#include "executor/message_reduce.hpp"
#include "executor/peers.hpp"
#include "executor/runtime.hpp"
#include "planner/lower.hpp"
#include "planner/schedule.hpp"
#include "planner/semantics.hpp"

namespace recycle::executor {

namespace detail {

/// The virtual stages each worker of `schedule` computes on.
[[nodiscard]] std::map<planner::WorkerId, std::vector<std::int32_t>> stages_held(
    const planner::Schedule& schedule);

/// Every (sender, reader) pair of `schedule`'s SENDs, the reader as its routes name it, in order.
[[nodiscard]] std::vector<std::pair<planner::WorkerId, planner::WorkerId>> send_pairs(
    const planner::Schedule& schedule);

/// Lowers and checks every schedule of the run: the first, then each kill's, which must keep the
/// layout, leave out the killed worker and ask no survivor for a stage it does not hold.
[[nodiscard]] std::vector<planner::Schedule> checked_plans(const planner::Schedule& schedule,
                                                           const RunConfig& config);

constexpr std::int32_t kActivation = 0;  ///< message kind: input of F(v)
constexpr std::int32_t kGradient = 1;    ///< message kind: output gradient for I/B(v)

/// The message kind that carries what `producer` makes (planner/semantics.hpp).
constexpr std::int32_t kind_of(planner::Producer producer) noexcept {
  return producer == planner::Producer::kForward ? kActivation : kGradient;
}

using Clock = std::chrono::steady_clock;
using ChunkKey = std::tuple<std::int32_t, std::int32_t, std::int32_t>;  ///< (v, owner, mb)
using LocalKey = std::tuple<std::int32_t, std::int32_t, std::int32_t, std::int32_t>;

/// Thrown in a worker when the run stops for a detected failure.
struct Interrupted {};

/// What lives for the whole run, across the schedules a kill switches between.
template <class B>
struct RunState {
  using Params = std::map<std::int32_t, typename B::Stage>;  ///< a worker's stages, by v

  B& backend;
  const RunConfig& config;
  Peers* peers;  ///< the other processes of a multi-process run; null in one process
  planner::Layout layout;
  Clock::time_point start;
  std::mutex mutex;                     ///< guards processed, losses, iteration_end
  std::vector<std::int32_t> processed;  ///< per iteration x owner x micro-batch
  std::vector<double> losses;           ///< the same shape
  std::vector<std::int64_t> iteration_end;
  std::vector<Params> params;  ///< by flat worker id (dp x pp + stage)
  /// By flat worker id: the parameters at the start of each iteration not yet finished by every
  /// worker (kept only when kills are configured).
  std::vector<std::map<std::int32_t, Params>> snapshots;

  RunState(B& b, const RunConfig& c, Peers* p, const planner::Layout& l)
      : backend(b), config(c), peers(p), layout(l) {}

  std::size_t flat(planner::WorkerId id) const { return layout.index(id); }
  std::size_t slot(std::int64_t iteration, std::int32_t owner, std::int32_t mb) const {
    return (static_cast<std::size_t>(iteration) * static_cast<std::size_t>(layout.dp) +
            static_cast<std::size_t>(owner)) *
               static_cast<std::size_t>(layout.microbatches) +
           static_cast<std::size_t>(mb);
  }
  std::int64_t now_ns() const { return ns_since_start(Clock::now()); }
  std::int64_t ns_since_start(Clock::time_point t) const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t - start).count();
  }
};

/// What the workers running one schedule share.
template <class B>
struct Shared {
  RunState<B>& run;
  const planner::Schedule& schedule;
  const RunConfig& config;
  const std::map<planner::WorkerId, std::size_t>& index;  ///< worker -> w (the backend's)
  planner::RouteTable routes;
  Abort abort;
  std::vector<std::unique_ptr<Mailbox<typename B::Tensor>>> mailboxes;  ///< by flat worker id
  /// With peers: the messages of the all-reduces and the barrier (MessageReduce), by flat id.
  std::vector<std::unique_ptr<Mailbox<>>> reduce_mailboxes;
  std::map<std::int32_t, std::unique_ptr<typename B::Reduce>> reduce;  ///< by virtual stage
  std::map<std::int32_t, std::vector<std::int32_t>> reduce_rank;  ///< v -> rank by dp (-1: none)
  std::unique_ptr<Barrier> barrier;
  /// With peers, the all-reduces and the barrier go by message (the ranks are in several
  /// processes), by virtual stage and for the barrier.
  std::map<std::int32_t, std::unique_ptr<MessageReduce>> message_reduce;
  std::unique_ptr<MessageReduce> message_barrier;
  const Kill* kill = nullptr;  ///< the kill that strikes while this schedule runs
  /// Per iteration: how many of this schedule's workers finished it, as far as this process
  /// knows (with peers, others' ends arrive by message); and how many of those ran here.
  std::vector<std::atomic<std::int32_t>> finished;
  std::vector<std::atomic<std::int32_t>> finished_here;
  std::atomic<std::int64_t> kill_ns{-1};
  std::atomic<std::int64_t> detected{-1};  ///< index of the worker reported silent
  std::atomic<std::int64_t> detect_ns{-1};
  std::atomic<std::int64_t> last_beat_ns{-1};
  Heartbeats* heartbeats = nullptr;
  /// Waited on for the detection of a kill that blocked no survivor (woken by the abort).
  std::mutex detection_mutex;
  std::condition_variable detection;

  Shared(RunState<B>& r, const planner::Schedule& s,
         const std::map<planner::WorkerId, std::size_t>& i)
      : run(r),
        schedule(s),
        config(r.config),
        index(i),
        routes(s),
        abort(r.config.wait_limit),
        finished(static_cast<std::size_t>(r.config.iterations)),
        finished_here(static_cast<std::size_t>(r.config.iterations)) {}

  std::size_t flat(planner::WorkerId id) const { return run.flat(id); }
  std::int64_t now_ns() const { return run.now_ns(); }
  /// Whether `id` runs in this process.
  bool here(planner::WorkerId id) const {
    return run.peers == nullptr ||
           run.peers->here(flat(id), static_cast<std::size_t>(schedule.layout.workers()));
  }

  /// The process worker `id` runs in (with peers).
  int process_of(planner::WorkerId id) const {
    return run.peers->process_of(flat(id), static_cast<std::size_t>(schedule.layout.workers()));
  }
  /// Hands `data` to worker `reader`'s mailbox, in whichever process it runs.
  void deliver(planner::WorkerId reader, const MessageKey& key, typename B::Tensor data) {
    if (!here(reader)) {
      run.peers->send(process_of(reader), flat(reader), key,
                      run.backend.into_host(std::move(data)));
      return;
    }
    mailboxes[flat(reader)]->deliver(key, std::move(data));
  }
  /// An all-reduce's or the barrier's message (MessageReduce) to worker `reader`.
  void deliver_reduce(planner::WorkerId reader, const MessageKey& key, std::vector<float> data) {
    if (!here(reader)) {
      run.peers->send(process_of(reader), flat(reader), key, std::move(data));
      return;
    }
    reduce_mailboxes[flat(reader)]->deliver(key, std::move(data));
  }
  /// A message from another process to worker `reader` (flat id) here: an activation or a
  /// gradient into its mailbox, on its device; an all-reduce's message into its host mailbox.
  void take_from_peer(std::size_t reader, const MessageKey& key, std::vector<float> data) {
    if (reader >= mailboxes.size()) return;  // no worker of this layout
    const std::int32_t kind = std::get<0>(key);
    if (kind != kActivation && kind != kGradient) {
      reduce_mailboxes[reader]->deliver(key, std::move(data));
      return;
    }
    const auto pp = static_cast<std::size_t>(schedule.layout.pp);
    const planner::WorkerId id{static_cast<std::int32_t>(reader / pp),
                               static_cast<std::int32_t>(reader % pp)};
    const auto w = index.find(id);
    if (w == index.end()) return;  // no worker of this run: nobody waits on it
    try {
      mailboxes[reader]->deliver(key, run.backend.from_host(w->second, std::move(data)));
    } catch (const std::exception& e) {
      // On the thread that took it in, which is not the reader's: the reader's wait ends.
      abort.raise(std::string("a message from another process: ") + e.what());
    }
  }
  /// Rank `rank`'s part of stage v's gradient all-reduce in iteration `it`.
  void all_reduce(std::int32_t v, std::int32_t rank, typename B::Tensor& data, std::int64_t it,
                  const std::string& what) {
    if (run.peers != nullptr) {
      run.backend.on_host(data, [&](std::vector<float>& host) {
        message_reduce.at(v)->all_reduce(static_cast<std::size_t>(rank), host, it, what);
      });
      return;
    }
    reduce.at(v)->all_reduce(rank, data, what);
  }
  /// Worker `rank` of the schedule's list waits for every other (the optimizer barrier).
  void barrier_wait(std::int32_t rank, std::int64_t it, const std::string& what) {
    if (run.peers != nullptr) {
      std::vector<float> none;
      message_barrier->all_reduce(static_cast<std::size_t>(rank), none, it, what);
      return;
    }
    barrier->wait(rank, what);
  }
  /// A worker here finished iteration `it`.
  void finish(std::int32_t it) {
    ++finished[static_cast<std::size_t>(it)];
    ++finished_here[static_cast<std::size_t>(it)];
    if (run.peers != nullptr) run.peers->forward_finished(it);
  }
};

template <class B>
class Worker {
  using Tensor = typename B::Tensor;
  using Action = planner::Action;
  using ActionType = planner::ActionType;
  using WorkerId = planner::WorkerId;

 public:
  Worker(Shared<B>& shared, std::size_t index)
      : shared_(shared),
        backend_(shared.run.backend),
        index_(index),
        schedule_(shared.schedule.workers[index]),
        id_(schedule_.id),
        w_(shared.index.at(id_)),
        params_(shared.run.params[shared.flat(id_)]) {}

  /// Runs iterations [first, config.iterations); returns false when this worker was killed.
  bool run(WorkerRun& out, std::int32_t first) {
    const std::int32_t iterations = shared_.config.iterations;
    const bool keep_snapshots = !shared_.config.kills.empty();
    const bool on_shared_core = !shared_.config.pin_cpus.empty();
    out.timeline.reserve(out.timeline.size() +
                         schedule_.actions.size() * static_cast<std::size_t>(iterations - first));
    for (std::int32_t it = first; it < iterations; ++it) {
      iteration_ = it;
      if (keep_snapshots) snapshot(it);
      std::size_t stop = schedule_.actions.size();
      if (shared_.kill != nullptr && shared_.kill->worker == id_ && shared_.kill->iteration == it) {
        stop = static_cast<std::size_t>(shared_.kill->fraction *
                                        static_cast<double>(schedule_.actions.size()));
      }
      bool stepped = false;
      for (std::size_t i = 0; i < schedule_.actions.size(); ++i) {
        if (i == stop) {
          shared_.kill_ns = shared_.now_ns();
          shared_.heartbeats->stop_beating(index_);
          return false;
        }
        if (shared_.abort.raised()) throw Interrupted{};
        const Action& a = schedule_.actions[i];
        if (a.type == ActionType::kOptimizer && !stepped && !shared_.schedule.staggered_optimizer) {
          shared_.barrier_wait(rank_all(), it,
                               "the optimizer barrier of iteration " + std::to_string(it));
        }
        Input input = fetch(a, it);  // waiting for data is not part of the action
        const std::int64_t start = shared_.now_ns();
        const std::int64_t cpu_start = on_shared_core ? thread_cpu_ns() : 0;
        execute(a, it, input);
        const std::int64_t cpu = on_shared_core ? thread_cpu_ns() - cpu_start : -1;
        const std::int64_t end = shared_.now_ns();
        out.timeline.push_back({a, it, start, end, cpu});
        if (a.type == ActionType::kOptimizer) {
          stepped = true;
          const std::lock_guard lock(shared_.run.mutex);
          auto& last = shared_.run.iteration_end[static_cast<std::size_t>(it)];
          last = std::max(last, end);
        }
      }
      shared_.finish(it);
    }
    return true;
  }

  /// The iteration the worker was in when it stopped.
  [[nodiscard]] std::int32_t iteration() const noexcept { return iteration_; }

 private:
  /// A compute action's data input: what another stage sent or this worker made (owned), or the
  /// first stage's input (the backend's, read in place); none when the action reads none.
  struct Input {
    std::optional<Tensor> owned;
    const Tensor* resident = nullptr;
    [[nodiscard]] const Tensor& get() const { return resident != nullptr ? *resident : *owned; }
  };

  /// Keeps the parameters at the start of `it` and forgets those of iterations every worker
  /// finished (a failure can no longer drop them).
  void snapshot(std::int32_t it) {
    auto& mine = shared_.run.snapshots[shared_.flat(id_)];
    const auto workers = static_cast<std::int32_t>(shared_.schedule.workers.size());
    for (auto s = mine.begin(); s != mine.end() && s->first < it;) {
      s = shared_.finished[static_cast<std::size_t>(s->first)] == workers ? mine.erase(s)
                                                                          : std::next(s);
    }
    mine.insert_or_assign(it, params_);
  }

  std::int32_t rank_all() const {
    std::int32_t rank = 0;
    for (const planner::WorkerSchedule& w : shared_.schedule.workers) {
      if (w.id == id_) return rank;
      ++rank;
    }
    return rank;
  }
  std::string where(const Action& a) const {
    return "worker " + planner::to_string(id_) + " " + planner::to_token(a, id_.dp);
  }
  WorkerId worker_of(std::int32_t owner, std::int32_t v, std::int32_t mb) const {
    return shared_.routes.worker_of(owner, v, mb);
  }
  /// `a`'s data input `in`, made at virtual stage in.virtual_stage: from this worker, or from
  /// the mailbox its transfer fills. Keyed by the reader's virtual stage.
  Tensor take(const planner::DataInput& in, const Action& a, std::int64_t it) {
    const std::int32_t kind = kind_of(in.producer), v = a.virtual_stage;
    const WorkerId from = worker_of(a.owner, in.virtual_stage, a.microbatch);
    const LocalKey local{kind, v, a.owner, a.microbatch};
    if (from == id_) {
      const auto found = local_.find(local);
      RECYCLE_ASSERT(found != local_.end(), "a same-worker input was not made before its use");
      Tensor data = std::move(found->second);
      local_.erase(found);
      return data;
    }
    return shared_.mailboxes[shared_.flat(id_)]->take({kind, v, a.owner, a.microbatch, it},
                                                      "the input of " + where(a));
  }
  /// Keeps `data` for its reader: here when the reader is this worker, else for its SEND.
  void keep(std::int32_t kind, std::int32_t reader_v, const Action& a, Tensor data) {
    const WorkerId reader = worker_of(a.owner, reader_v, a.microbatch);
    const LocalKey key{kind, reader_v, a.owner, a.microbatch};
    (reader == id_ ? local_ : outbox_).insert_or_assign(key, std::move(data));
  }
  void send(std::int32_t kind, std::int32_t reader_v, const Action& a, std::int64_t it) {
    const LocalKey key{kind, reader_v, a.owner, a.microbatch};
    const auto found = outbox_.find(key);
    RECYCLE_ASSERT(found != outbox_.end(), "a SEND before the compute it sends");
    const WorkerId reader = worker_of(a.owner, reader_v, a.microbatch);
    // The backend's transfer to a reader here; to another process's, the peers carry it.
    Tensor moved = shared_.here(reader)
                       ? backend_.send(std::move(found->second), w_, shared_.index.at(reader))
                       : std::move(found->second);
    outbox_.erase(found);
    shared_.deliver(reader, {kind, reader_v, a.owner, a.microbatch, it}, std::move(moved));
  }

  Input fetch(const Action& a, std::int64_t it) {
    const std::int32_t v = a.virtual_stage, last = shared_.schedule.layout.virtual_stages() - 1;
    Input in;
    // The first virtual stage's F reads the batch; every other input is what data_inputs names
    // (the activations an I or W holds on this worker are the chunk's, kept apart).
    if (a.type == ActionType::kForward && v == 0) {
      in.resident = &backend_.input(w_, shared_.run.slot(it, a.owner, a.microbatch));
      return in;
    }
    for (const planner::DataInput& input : planner::data_inputs(a.type, v, last)) {
      if (input.same_worker) continue;
      in.owned.emplace(take(input, a, it));
    }
    return in;
  }

  void forward(const Action& a, const Tensor& input) {
    const std::int32_t v = a.virtual_stage, last = shared_.schedule.layout.virtual_stages() - 1;
    auto& chunk = chunks_[{v, a.owner, a.microbatch}];
    Tensor out = params_.at(v).forward(input, chunk);
    if (const auto send = planner::output_of(a, last)) {
      keep(kActivation, planner::partner(*send).virtual_stage, a, std::move(out));
    } else {
      last_outputs_.insert_or_assign(ChunkKey{v, a.owner, a.microbatch}, std::move(out));
    }
  }

  void backward_input(const Action& a, std::int64_t it, const Input& input) {
    const std::int32_t v = a.virtual_stage, last = shared_.schedule.layout.virtual_stages() - 1;
    std::optional<Tensor> loss_gradient;
    if (v == last) {
      const auto found = last_outputs_.find({v, a.owner, a.microbatch});
      RECYCLE_ASSERT(found != last_outputs_.end(), "a backward before its forward");
      const std::size_t slot = shared_.run.slot(it, a.owner, a.microbatch);
      loss_gradient.emplace();
      const double loss =
          backend_.loss(w_, found->second, backend_.target(w_, slot), *loss_gradient);
      last_outputs_.erase(found);
      const std::lock_guard lock(shared_.run.mutex);
      ++shared_.run.processed[slot];
      shared_.run.losses[slot] = loss;
    }
    auto& chunk = chunks_.at({v, a.owner, a.microbatch});
    Tensor dx = params_.at(v).backward_input(loss_gradient ? *loss_gradient : input.get(), chunk);
    if (const auto send = planner::output_of(a, last))
      keep(kGradient, planner::partner(*send).virtual_stage, a, std::move(dx));
  }

  void backward_weight(const Action& a) {
    const auto found = chunks_.find({a.virtual_stage, a.owner, a.microbatch});
    RECYCLE_ASSERT(found != chunks_.end(), "a W before its I");
    params_.at(a.virtual_stage).backward_weight(found->second);
    chunks_.erase(found);
  }

  void reduce(const Action& a, std::int64_t it) {
    const std::int32_t v = a.virtual_stage;
    const std::int32_t rank = shared_.reduce_rank.at(v)[static_cast<std::size_t>(id_.dp)];
    shared_.all_reduce(v, rank, params_.at(v).gradients(), it,
                       "the gradient all-reduce of " + where(a));
  }

  void execute(const Action& a, std::int64_t it, const Input& input) {
    const planner::Layout& layout = shared_.schedule.layout;
    switch (a.type) {
      case ActionType::kForward:
        forward(a, input.get());
        break;
      case ActionType::kBackwardInput:
        backward_input(a, it, input);
        break;
      case ActionType::kBackward:
        backward_input(a, it, input);
        backward_weight(a);
        break;
      case ActionType::kBackwardWeight:
        backward_weight(a);
        break;
      case ActionType::kSendF:
      case ActionType::kSendB:
        send(kind_of(planner::comm_compute(a.type)), planner::partner(a).virtual_stage, a, it);
        break;
      case ActionType::kRecvF:
      case ActionType::kRecvB:
        break;  // posted: the compute that needs the data waits for it
      case ActionType::kReduceGrad:
        reduce(a, it);
        break;
      case ActionType::kOptimizer:
        params_.at(a.virtual_stage)
            .step(shared_.config.learning_rate,
                  static_cast<std::int64_t>(layout.dp) * layout.microbatches);
        break;
    }
  }

  Shared<B>& shared_;
  B& backend_;
  std::size_t index_;
  const planner::WorkerSchedule& schedule_;
  WorkerId id_;
  std::size_t w_;
  typename RunState<B>::Params& params_;
  std::int32_t iteration_ = 0;
  std::map<ChunkKey, typename B::Chunk> chunks_;
  std::map<ChunkKey, Tensor> last_outputs_;
  std::map<LocalKey, Tensor> local_;   ///< inputs made here for this worker
  std::map<LocalKey, Tensor> outbox_;  ///< outputs waiting for their SEND
};

/// With peers: the all-reduce of `members` (in rank order) by message; `group` names it.
template <class B>
std::unique_ptr<MessageReduce> message_reduce(Shared<B>& shared, std::int32_t group,
                                              std::vector<planner::WorkerId> members) {
  const std::size_t ranks = members.size();
  return std::make_unique<MessageReduce>(
      ranks, group,
      [&shared, members](std::size_t to, const MessageKey& key, std::vector<float> data) {
        shared.deliver_reduce(members[to], key, std::move(data));
      },
      [&shared, members](std::size_t rank) -> Mailbox<>& {
        return *shared.reduce_mailboxes[shared.flat(members[rank])];
      });
}

/// What the processes agree on when a schedule stops (one process: its own facts).
struct Agreed {
  std::int64_t kill_ns = -1;
  std::int64_t detected = -1;  ///< the worker first found silent (schedule index), -1: none
  std::int64_t detect_ns = -1;
  std::int64_t last_beat_ns = -1;
  std::int64_t last_iteration = -1;
  std::optional<std::string> error;  ///< an abort raised, when nothing was found silent

  explicit Agreed(const std::vector<SegmentFacts>& all) {
    for (const SegmentFacts& f : all) {
      kill_ns = std::max(kill_ns, f.kill_ns);
      last_iteration = std::max(last_iteration, f.last_iteration);
      if (f.detected >= 0 && (detected < 0 || f.detect_ns < detect_ns)) {
        detected = f.detected;
        detect_ns = f.detect_ns;
        last_beat_ns = f.last_beat_ns;
      }
      if (f.raised != 0 && !error) error = std::string(f.reason.data());
    }
  }
};

/// Runs `schedule` (the run's schedule number `segment`) from iteration `first` until the end or
/// until a kill is detected; returns the first iteration not finished by every worker
/// (config.iterations when all finished). With peers, only this process's workers run here.
template <class B>
std::int32_t run_segment(RunState<B>& run, const planner::Schedule& schedule, std::int32_t segment,
                         std::int32_t first, const Kill* kill,
                         const std::map<planner::WorkerId, std::size_t>& index, RunResult& result) {
  const planner::Layout& layout = schedule.layout;
  Peers* const peers = run.peers;
  Shared<B> shared(run, schedule, index);
  shared.kill = kill;
  shared.mailboxes.resize(static_cast<std::size_t>(layout.workers()));
  for (auto& m : shared.mailboxes) m = std::make_unique<Mailbox<typename B::Tensor>>(shared.abort);
  if (peers != nullptr) {
    shared.reduce_mailboxes.resize(shared.mailboxes.size());
    for (auto& m : shared.reduce_mailboxes) m = std::make_unique<Mailbox<>>(shared.abort);
  }
  std::map<std::int32_t, std::vector<std::int32_t>> replicas;  // v -> live dps, ascending
  for (const planner::WorkerSchedule& w : schedule.workers) {
    for (const planner::Action& a : w.actions) {
      if (a.type != planner::ActionType::kReduceGrad) continue;
      auto& list = replicas[a.virtual_stage];
      if (std::find(list.begin(), list.end(), w.id.dp) == list.end()) list.push_back(w.id.dp);
    }
  }
  for (auto& [v, list] : replicas) {
    std::sort(list.begin(), list.end());
    std::vector<std::int32_t> rank(static_cast<std::size_t>(layout.dp), -1);
    std::vector<planner::WorkerId> members;
    for (std::size_t r = 0; r < list.size(); ++r) {
      rank[static_cast<std::size_t>(list[r])] = static_cast<std::int32_t>(r);
      members.push_back({list[r], v % layout.pp});
    }
    shared.reduce_rank[v] = std::move(rank);
    if (peers != nullptr) {
      shared.message_reduce[v] = message_reduce(shared, v, std::move(members));
      continue;
    }
    std::vector<std::size_t> ranks;
    for (const planner::WorkerId& id : members) ranks.push_back(index.at(id));
    shared.reduce[v] = run.backend.make_reduce(std::move(ranks), shared.abort);
  }
  if (peers != nullptr) {
    std::vector<planner::WorkerId> all;
    for (const planner::WorkerSchedule& w : schedule.workers) all.push_back(w.id);
    shared.message_barrier = message_reduce(shared, -1, std::move(all));
  } else {
    shared.barrier =
        std::make_unique<Barrier>(static_cast<std::int32_t>(schedule.workers.size()), shared.abort);
  }
  for (const auto& [from, to] : send_pairs(schedule)) {
    // A SEND to another process goes through the peers.
    if (shared.here(from) && shared.here(to)) run.backend.connect(index.at(from), index.at(to));
  }

  std::vector<bool> here;
  std::vector<std::unique_ptr<Worker<B>>> workers;  // null: a worker of another process
  for (std::size_t i = 0; i < schedule.workers.size(); ++i) {
    here.push_back(shared.here(schedule.workers[i].id));
    workers.push_back(here.back() ? std::make_unique<Worker<B>>(shared, i) : nullptr);
  }
  std::vector<std::size_t> timeline_start;
  for (const planner::WorkerSchedule& w : schedule.workers)
    timeline_start.push_back(result.workers[index.at(w.id)].timeline.size());
  if (peers != nullptr) {
    // A thread waiting on a mailbox takes in other processes' messages: often, unless the
    // workers share cores, where its looks take a working thread's time.
    const Poll poll{[peers] { return peers->take_in(); },
                    std::chrono::microseconds(run.config.pin_cpus.empty() ? 20 : 200)};
    for (auto& m : shared.mailboxes) m->poll_while_waiting(poll);
    for (auto& m : shared.reduce_mailboxes) m->poll_while_waiting(poll);
    SegmentLinks links;
    links.segment = segment;
    links.deliver = [&shared](std::size_t reader, const MessageKey& key, std::vector<float> data) {
      shared.take_from_peer(reader, key, std::move(data));
    };
    links.abort = &shared.abort;
    links.finished = &shared.finished;
    peers->open(std::move(links));
    shared.abort.forward_to([peers](const std::string& reason) { peers->forward_abort(reason); });
    peers->barrier();  // every process delivers this schedule's messages before any is sent
  }
  std::optional<Heartbeats> heartbeats;
  if (kill != nullptr) {
    auto on_failed = [&](std::size_t worker, Clock::time_point last, Clock::time_point when) {
      shared.last_beat_ns = run.ns_since_start(last);
      shared.detect_ns = run.ns_since_start(when);
      shared.detected = static_cast<std::int64_t>(worker);
      shared.abort.raise("worker " + planner::to_string(schedule.workers[worker].id) +
                         " missed its heartbeats");
    };
    if (peers != nullptr) {
      heartbeats.emplace(schedule.workers.size(), run.config.heartbeat, std::move(on_failed), here,
                         [peers](std::size_t worker) { peers->forward_beat(worker); });
      peers->listen(&*heartbeats);
    } else {
      heartbeats.emplace(schedule.workers.size(), run.config.heartbeat, std::move(on_failed));
    }
    shared.heartbeats = &*heartbeats;
  }
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    if (!here[i]) continue;
    threads.emplace_back([&, i] {
      const std::size_t w = index.at(schedule.workers[i].id);
      WorkerRun& out = result.workers[w];
      try {
        run.backend.enter(w);
        out.killed = !workers[i]->run(out, first);
      } catch (const Interrupted&) {
      } catch (const std::exception& e) {
        // A wait woken by the detection is not an error; anything else is.
        if (shared.detected < 0) {
          shared.abort.raise("worker " + planner::to_string(schedule.workers[i].id) + ": " +
                             e.what());
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (shared.kill_ns >= 0 && shared.detected < 0 && !shared.abort.raised()) {
    // The kill struck after the last action any survivor waited on (late in the last iteration):
    // the survivors finished without blocking on it, and its beats stop all the same. The failure
    // is found as ever, by the monitor, and the iteration it left unfinished is dropped and redone.
    // The detection raises the abort, which wakes this wait.
    shared.abort.watch(&shared.detection, &shared.detection_mutex);
    std::unique_lock lock(shared.detection_mutex);
    // Another process may find it first and forward the abort: either ends the wait.
    wait_for(
        lock, shared.detection, shared.abort,
        [&] { return shared.detected >= 0 || shared.abort.raised(); },
        "the heartbeat monitor to find worker " + planner::to_string(kill->worker) + " silent");
  }
  if (peers != nullptr) {
    peers->barrier();  // every process's workers have stopped: the beats may stop too
    peers->listen(nullptr);
  }
  heartbeats.reset();
  if (peers != nullptr) {
    peers->close();
    shared.abort.forward_to({});
  }

  SegmentFacts mine;
  mine.kill_ns = shared.kill_ns;
  mine.detected = shared.detected;
  mine.detect_ns = shared.detect_ns;
  mine.last_beat_ns = shared.last_beat_ns;
  for (const auto& worker : workers) {
    if (worker)
      mine.last_iteration = std::max<std::int64_t>(mine.last_iteration, worker->iteration());
  }
  if (shared.abort.raised()) {
    mine.raised = 1;
    const std::string reason = shared.abort.reason();
    reason.copy(mine.reason.data(), std::min(reason.size(), mine.reason.size() - 1));
  }
  const Agreed agreed(peers != nullptr ? peers->agree(mine) : std::vector<SegmentFacts>{mine});
  if (agreed.detected < 0) {
    if (agreed.error) throw std::runtime_error(*agreed.error);
    return run.config.iterations;
  }
  const planner::WorkerId silent = schedule.workers[static_cast<std::size_t>(agreed.detected)].id;
  if (kill == nullptr || silent != kill->worker || agreed.kill_ns < 0) {
    throw InputError("--heartbeat-ms",
                     "worker " + planner::to_string(silent) + " missed " +
                         std::to_string(run.config.heartbeat.missed) + " beats of " +
                         std::to_string(run.config.heartbeat.period.count()) +
                         " ms without being killed: this machine is too loaded for that period; "
                         "give a longer one");
  }

  // Drop every iteration some worker did not finish.
  std::vector<std::int32_t> finished;
  for (const auto& count : shared.finished_here) finished.push_back(count);
  if (peers != nullptr) finished = peers->sum(finished);
  const auto live = static_cast<std::int32_t>(schedule.workers.size());
  std::int32_t resume = first;
  while (resume < run.config.iterations && finished[static_cast<std::size_t>(resume)] == live)
    ++resume;
  Recovery recovery;
  recovery.killed = kill->worker;
  recovery.kill_ns = agreed.kill_ns;
  recovery.detect_ns = agreed.detect_ns;
  recovery.last_beat_ns = agreed.last_beat_ns;
  recovery.resumed_at = resume;
  recovery.dropped_iterations =
      std::max<std::int32_t>(0, static_cast<std::int32_t>(agreed.last_iteration) - resume + 1);
  for (std::size_t i = 0; i < workers.size(); ++i) {
    if (!here[i]) continue;
    const planner::WorkerId id = schedule.workers[i].id;
    auto& timeline = result.workers[index.at(id)].timeline;
    for (std::size_t t = timeline_start[i]; t < timeline.size(); ++t)
      timeline[t].dropped = timeline[t].iteration >= resume;
    if (id == kill->worker) continue;
    auto& snapshots = run.snapshots[run.flat(id)];
    const auto kept = snapshots.find(resume);
    RECYCLE_ASSERT(kept != snapshots.end(),
                   "a survivor lost the parameters of a dropped iteration");
    run.params[run.flat(id)] = std::move(kept->second);
    snapshots.clear();
  }
  std::vector<std::int32_t> dropped{0};  // losses computed here in the dropped iterations
  for (std::int32_t it = resume; it < run.config.iterations; ++it) {
    run.iteration_end[static_cast<std::size_t>(it)] = 0;
    for (std::int32_t owner = 0; owner < layout.dp; ++owner) {
      for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
        const std::size_t slot = run.slot(it, owner, mb);
        dropped.front() += run.processed[slot];
        run.processed[slot] = 0;
        run.losses[slot] = 0;
      }
    }
  }
  if (peers != nullptr) dropped = peers->sum(dropped);
  recovery.dropped_microbatches = dropped.front();
  result.recoveries.push_back(recovery);
  return resume;
}

}  // namespace detail

/// Runs `schedule` on `backend` (see the top of this file); run_on_cpu's and run_on_cuda's one
/// body. `check` is called with each of the run's lowered plans before anything runs (the
/// backend's limits: memory, placement).
template <class B, class Check>
RunResult run_schedule(B& backend, const planner::Schedule& schedule, const RunConfig& config,
                       Check&& check, Peers* peers = nullptr) {
  using namespace detail;
  if (config.iterations < 1) throw InputError("--iterations", "must be at least 1");
  const std::vector<planner::Schedule> plans = checked_plans(schedule, config);
  for (const planner::Schedule& plan : plans) check(plan);
  const planner::Layout& layout = plans.front().layout;

  RunState<B> run(backend, config, peers, layout);
  const std::size_t slots = static_cast<std::size_t>(config.iterations) *
                            static_cast<std::size_t>(layout.dp) *
                            static_cast<std::size_t>(layout.microbatches);
  run.processed.assign(slots, 0);
  run.losses.assign(slots, 0.0);
  run.iteration_end.assign(static_cast<std::size_t>(config.iterations), 0);
  {
    // Data loading is not part of what is timed.
    std::vector<std::vector<float>> inputs, targets;
    for (std::int32_t it = 0; it < config.iterations; ++it) {
      for (std::int32_t owner = 0; owner < layout.dp; ++owner) {
        for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
          inputs.push_back(synthetic_input(config.shape, config.seed, it, owner, mb));
          targets.push_back(synthetic_target(config.shape, config.seed, it, owner, mb));
        }
      }
    }
    backend.load(std::move(inputs), std::move(targets));
  }
  run.params.resize(static_cast<std::size_t>(layout.workers()));
  run.snapshots.resize(static_cast<std::size_t>(layout.workers()));
  RunResult result;
  std::map<planner::WorkerId, std::size_t> index;
  const auto held = stages_held(plans.front());
  for (const auto& [id, stages] : held) {
    const std::size_t w = result.workers.size();
    index[id] = w;
    result.workers.emplace_back().id = id;
    if (peers != nullptr && !peers->here(run.flat(id), static_cast<std::size_t>(layout.workers())))
      continue;
    for (const std::int32_t v : stages)
      run.params[run.flat(id)].emplace(v, backend.make_stage(w, config.shape, v, config.seed));
  }

  if (peers != nullptr) peers->barrier();  // one start for every process's clock
  run.start = Clock::now();
  std::int32_t next = 0;
  for (std::size_t segment = 0; next < config.iterations; ++segment) {
    const Kill* kill = segment < config.kills.size() ? &config.kills[segment] : nullptr;
    result.segment_start.push_back(next);
    next = run_segment(run, plans[segment], static_cast<std::int32_t>(segment), next, kill, index,
                       result);
    if (next < config.iterations) result.recoveries.back().resume_ns = run.now_ns();
  }
  // A kill strikes in its iteration, which is never before the previous kill's resumption.
  RECYCLE_ASSERT(result.segment_start.size() == plans.size(), "a kill did not strike");

  for (WorkerRun& w : result.workers) {
    if (w.killed) continue;
    for (auto& [v, p] : run.params[run.flat(w.id)])
      w.parameters.emplace_back(v, backend.download(p.parameters()));
  }
  if (peers != nullptr) {
    std::vector<bool> mine;
    for (const WorkerRun& w : result.workers)
      mine.push_back(peers->here(run.flat(w.id), static_cast<std::size_t>(layout.workers())));
    peers->collect(result, mine, run.processed, run.losses, run.iteration_end);
    if (!peers->root()) return result;  // the root checks and reports the whole run
  }
  for (std::int32_t it = 0; it < config.iterations; ++it) {
    double sum = 0;
    for (std::int32_t owner = 0; owner < layout.dp; ++owner) {
      for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
        const std::size_t slot = run.slot(it, owner, mb);
        if (run.processed[slot] != 1) {
          throw std::runtime_error("micro-batch " + std::to_string(mb) + " of pipeline " +
                                   std::to_string(owner) + " was processed " +
                                   std::to_string(run.processed[slot]) + " times in iteration " +
                                   std::to_string(it));
        }
        sum += run.losses[slot];
        result.microbatches_processed += run.processed[slot];
      }
    }
    result.loss.push_back(sum / static_cast<double>(layout.dp * layout.microbatches));
  }
  result.iteration_end_ns = run.iteration_end;
  return result;
}

}  // namespace recycle::executor
