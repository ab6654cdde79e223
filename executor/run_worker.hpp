// One worker of a run (executor/run_schedule.hpp): what lives for the whole run (RunState),
// what the workers of one schedule share (Shared: mailboxes, routes, the all-reduces, the kill),
// and how a worker walks its lowered list (Worker): where each input comes from and each output
// goes, as the schedule language's rules say (planner/language/semantics.hpp). Templates over the
// backend; the run's driver and its recovery from kills are in run_segment.hpp.
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
#include "planner/language/lower.hpp"
#include "planner/language/schedule.hpp"
#include "planner/language/semantics.hpp"

namespace recycle::executor::detail {

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

/// The message kind that carries what `producer` makes (planner/language/semantics.hpp).
constexpr std::int32_t kind_of(planner::Producer producer) noexcept {
  return producer == planner::Producer::kForward ? kActivation : kGradient;
}

using Clock = std::chrono::steady_clock;
/// (iteration, v, owner, mb): lists that run across iterations (2bw) hold two iterations' chunks.
using ChunkKey = std::tuple<std::int64_t, std::int32_t, std::int32_t, std::int32_t>;
/// (iteration, kind, reader's v, owner, mb)
using LocalKey = std::tuple<std::int64_t, std::int32_t, std::int32_t, std::int32_t, std::int32_t>;

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
  /// Lists that run across iterations (Action::lag, 2bw) take one list more: list k runs
  /// iteration k's actions and the lagged ones of iteration k - 1, so the first list skips the
  /// lagged ones (no iteration before the run) and the last runs only them.
  bool run(WorkerRun& out, std::int32_t first) {
    const std::int32_t iterations = shared_.config.iterations;
    const bool keep_snapshots = !shared_.config.kills.empty();
    const bool on_shared_core = !shared_.config.pin_cpus.empty();
    const bool lags = shared_.schedule.has_lags();
    const std::int32_t lists = lags ? iterations + 1 : iterations;
    out.timeline.reserve(out.timeline.size() +
                         schedule_.actions.size() * static_cast<std::size_t>(lists - first));
    for (std::int32_t list = first; list < lists; ++list) {
      iteration_ = std::min(list, iterations - 1);
      if (keep_snapshots) snapshot(list);
      std::size_t stop = schedule_.actions.size();
      if (shared_.kill != nullptr && shared_.kill->worker == id_ &&
          shared_.kill->iteration == list) {
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
        const std::int32_t it = list - a.lag;  // the iteration the action belongs to
        if (it < first || it >= iterations) continue;
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
      // A list that runs across iterations finishes the one before it.
      if (!lags) {
        shared_.finish(list);
      } else if (list > first) {
        shared_.finish(list - 1);
      }
    }
    // The newest weights are the run's result.
    for (auto& [v, versions] : versions_) params_.at(v) = versions.rbegin()->second;
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
    const LocalKey local{it, kind, v, a.owner, a.microbatch};
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
  void keep(std::int32_t kind, std::int32_t reader_v, const Action& a, std::int64_t it,
            Tensor data) {
    const WorkerId reader = worker_of(a.owner, reader_v, a.microbatch);
    const LocalKey key{it, kind, reader_v, a.owner, a.microbatch};
    (reader == id_ ? local_ : outbox_).insert_or_assign(key, std::move(data));
  }
  void send(std::int32_t kind, std::int32_t reader_v, const Action& a, std::int64_t it) {
    const LocalKey key{it, kind, reader_v, a.owner, a.microbatch};
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

  /// The weights an action of iteration `it` at virtual stage `v` computes with, and where its
  /// gradients sum: the stage's own; under two weight versions (2bw) a copy, for that iteration
  /// alone, of version max(it - 1, 0), the version semantics.hpp's weights_distance names (its
  /// forward and backward alike). Each iteration sums its gradients apart, so an iteration's Ws
  /// listed before the previous one's step do not mix with its gradients.
  typename B::Stage& stage(std::int32_t v, std::int64_t it) {
    if (shared_.schedule.weight_versions == 1) return params_.at(v);
    auto& mine = iterations_[v];
    auto found = mine.find(it);
    if (found == mine.end())
      found = mine.emplace(it, weights(v).at(std::max<std::int64_t>(it - 1, 0))).first;
    return found->second;
  }
  /// Under two weight versions: stage v's versions still read, by number (version 0: the
  /// initial weights).
  std::map<std::int64_t, typename B::Stage>& weights(std::int32_t v) {
    auto& versions = versions_[v];
    if (versions.empty()) versions.emplace(0, params_.at(v));
    return versions;
  }

  /// The optimizer step of iteration `it`. Under two weight versions: version it + 1 is version
  /// it less the learning rate times iteration it's gradients, which were computed on version
  /// it - 1 (PipeDream-2BW's W(t+1) = W(t) - lr grad f(W(t-1))); versions below it are no longer
  /// read (iteration it + 1 computes on version it).
  void step(std::int32_t v, std::int64_t it) {
    const planner::Layout& layout = shared_.schedule.layout;
    const std::int64_t microbatches = static_cast<std::int64_t>(layout.dp) * layout.microbatches;
    if (shared_.schedule.weight_versions == 1) {
      params_.at(v).step(shared_.config.learning_rate, microbatches);
      return;
    }
    auto& versions = weights(v);
    typename B::Stage next = versions.at(it);
    next.gradients() = stage(v, it).gradients();
    next.step(shared_.config.learning_rate, microbatches);
    iterations_[v].erase(it);
    versions.insert_or_assign(it + 1, std::move(next));
    versions.erase(versions.begin(), versions.lower_bound(it));
  }

  void forward(const Action& a, std::int64_t it, const Tensor& input) {
    const std::int32_t v = a.virtual_stage, last = shared_.schedule.layout.virtual_stages() - 1;
    auto& chunk = chunks_[{it, v, a.owner, a.microbatch}];
    Tensor out = stage(v, it).forward(input, chunk);
    if (const auto send = planner::output_of(a, last)) {
      keep(kActivation, planner::partner(*send).virtual_stage, a, it, std::move(out));
    } else {
      last_outputs_.insert_or_assign(ChunkKey{it, v, a.owner, a.microbatch}, std::move(out));
    }
  }

  void backward_input(const Action& a, std::int64_t it, const Input& input) {
    const std::int32_t v = a.virtual_stage, last = shared_.schedule.layout.virtual_stages() - 1;
    std::optional<Tensor> loss_gradient;
    if (v == last) {
      const auto found = last_outputs_.find({it, v, a.owner, a.microbatch});
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
    auto& chunk = chunks_.at({it, v, a.owner, a.microbatch});
    Tensor dx = stage(v, it).backward_input(loss_gradient ? *loss_gradient : input.get(), chunk);
    if (const auto send = planner::output_of(a, last))
      keep(kGradient, planner::partner(*send).virtual_stage, a, it, std::move(dx));
  }

  void backward_weight(const Action& a, std::int64_t it) {
    const auto found = chunks_.find({it, a.virtual_stage, a.owner, a.microbatch});
    RECYCLE_ASSERT(found != chunks_.end(), "a W before its I");
    stage(a.virtual_stage, it).backward_weight(found->second);
    chunks_.erase(found);
  }

  /// The stage's gradient all-reduce over its live replicas: every chunk the worker runs (a
  /// stage's replicas run the same chunks), in ascending virtual stage, each its own round.
  void reduce(const Action& a, std::int64_t it) {
    const std::int32_t group = a.virtual_stage;
    const std::int32_t rank = shared_.reduce_rank.at(group)[static_cast<std::size_t>(id_.dp)];
    const auto chunks = static_cast<std::int64_t>(params_.size());
    std::int64_t k = 0;
    for (const auto& held : params_) {
      shared_.all_reduce(group, rank, stage(held.first, it).gradients(), it * chunks + k++,
                         "the gradient all-reduce of " + where(a));
    }
  }

  void execute(const Action& a, std::int64_t it, const Input& input) {
    switch (a.type) {
      case ActionType::kForward:
        forward(a, it, input.get());
        break;
      case ActionType::kBackwardInput:
        backward_input(a, it, input);
        break;
      case ActionType::kBackward:
        backward_input(a, it, input);
        backward_weight(a, it);
        break;
      case ActionType::kBackwardWeight:
        backward_weight(a, it);
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
        for (const auto& held : params_) step(held.first, it);  // every chunk of the stage
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
  /// Under two weight versions (2bw), per virtual stage: the versions still read, by number, and
  /// each running iteration's copy of the version it computes on, with its gradients.
  std::map<std::int32_t, std::map<std::int64_t, typename B::Stage>> versions_, iterations_;
};

}  // namespace recycle::executor::detail
