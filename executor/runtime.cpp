#include "executor/runtime.hpp"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include <pthread.h>
#include <sched.h>
#include <tuple>

#include "core/error.hpp"
#include "executor/channels.hpp"
#include "executor/footprint.hpp"
#include "executor/heartbeat.hpp"
#include "planner/lower.hpp"
#include "planner/validator.hpp"

namespace recycle::executor {

using planner::Action;
using planner::ActionType;
using planner::WorkerId;

namespace {

double mean_spacing_s(const std::vector<std::int64_t>& ends, std::size_t first, std::size_t last) {
  if (last <= first + 1) return 0;
  return static_cast<double>(ends[last - 1] - ends[first]) * 1e-9 /
         static_cast<double>(last - 1 - first);
}

}  // namespace

double RunResult::iteration_time_s() const {
  if (iteration_end_ns.empty()) return 0;
  if (iteration_end_ns.size() == 1) return static_cast<double>(iteration_end_ns.front()) * 1e-9;
  return mean_spacing_s(iteration_end_ns, 0, iteration_end_ns.size());
}

double RunResult::iteration_time_s(std::size_t segment) const {
  const std::size_t first = static_cast<std::size_t>(segment_start.at(segment));
  const std::size_t last = segment + 1 < segment_start.size()
                               ? static_cast<std::size_t>(segment_start[segment + 1])
                               : iteration_end_ns.size();
  return mean_spacing_s(iteration_end_ns, first, last);
}

namespace {

constexpr std::int32_t kActivation = 0;  ///< message kind: input of F(v)
constexpr std::int32_t kGradient = 1;    ///< message kind: output gradient for I/B(v)

using Clock = std::chrono::steady_clock;
using ChunkKey = std::tuple<std::int32_t, std::int32_t, std::int32_t>;  ///< (v, owner, mb)
using LocalKey = std::tuple<std::int32_t, std::int32_t, std::int32_t, std::int32_t>;
using Params = std::map<std::int32_t, StageParams>;  ///< one worker's stages, by virtual stage

/// Thrown in a worker when the run stops for a detected failure.
struct Interrupted {};

/// Keeps the calling thread on one cpu (RunConfig::pin_cpus).
void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
    throw std::runtime_error("cannot keep a worker on cpu " + std::to_string(cpu));
}

/// What lives for the whole run, across the schedules a kill switches between.
struct RunState {
  const RunConfig& config;
  planner::Layout layout;
  Clock::time_point start;
  std::mutex mutex;                     ///< guards processed, losses, iteration_end
  std::vector<std::int32_t> processed;  ///< per iteration x owner x micro-batch
  std::vector<double> losses;           ///< the same shape
  std::vector<std::int64_t> iteration_end;
  /// Per iteration x owner x micro-batch: the first stage's input and the last stage's target,
  /// made before the clock starts (data loading is not part of what is timed).
  std::vector<std::vector<float>> inputs, targets;
  std::vector<Params> params;  ///< by flat worker id (dp x pp + stage)
  /// By flat worker id: the parameters at the start of each iteration not yet finished by every
  /// worker (kept only when kills are configured).
  std::vector<std::map<std::int32_t, Params>> snapshots;

  RunState(const RunConfig& c, const planner::Layout& l) : config(c), layout(l) {}

  std::size_t flat(WorkerId id) const {
    return static_cast<std::size_t>(id.dp) * static_cast<std::size_t>(layout.pp) +
           static_cast<std::size_t>(id.stage);
  }
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
struct Shared {
  RunState& run;
  const planner::Schedule& schedule;
  const RunConfig& config;
  planner::RouteTable routes;
  Abort abort;
  std::vector<std::unique_ptr<Mailbox>> mailboxes;                 ///< by flat worker id
  std::map<std::int32_t, std::unique_ptr<AllReduceGroup>> reduce;  ///< by virtual stage
  std::map<std::int32_t, std::vector<std::int32_t>> reduce_rank;   ///< v -> rank by dp (-1: none)
  std::unique_ptr<Barrier> barrier;
  const Kill* kill = nullptr;  ///< the kill that strikes while this schedule runs
  /// Per iteration: how many of this schedule's workers finished it.
  std::vector<std::atomic<std::int32_t>> finished;
  std::atomic<std::int64_t> kill_ns{-1};
  std::atomic<std::int64_t> detected{-1};  ///< index of the worker reported silent
  std::atomic<std::int64_t> detect_ns{-1};
  std::atomic<std::int64_t> last_beat_ns{-1};
  Heartbeats* heartbeats = nullptr;

  Shared(RunState& r, const planner::Schedule& s)
      : run(r),
        schedule(s),
        config(r.config),
        routes(s),
        abort(r.config.wait_limit),
        finished(static_cast<std::size_t>(r.config.iterations)) {}

  std::size_t flat(WorkerId id) const { return run.flat(id); }
  std::int64_t now_ns() const { return run.now_ns(); }
};

class Worker {
 public:
  Worker(Shared& shared, std::size_t index)
      : shared_(shared),
        index_(index),
        schedule_(shared.schedule.workers[index]),
        id_(schedule_.id),
        params_(shared.run.params[shared.flat(id_)]) {}

  /// Runs iterations [first, config.iterations); returns false when this worker was killed.
  bool run(WorkerRun& out, std::int32_t first) {
    const std::int32_t iterations = shared_.config.iterations;
    const bool keep_snapshots = !shared_.config.kills.empty();
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
          shared_.barrier->wait(rank_all(),
                                "the optimizer barrier of iteration " + std::to_string(it));
        }
        std::vector<float> input = fetch(a, it);  // waiting for data is not part of the action
        const std::int64_t start = shared_.now_ns();
        execute(a, it, std::move(input));
        const std::int64_t end = shared_.now_ns();
        out.timeline.push_back({a, it, start, end});
        if (a.type == ActionType::kOptimizer) {
          stepped = true;
          const std::lock_guard lock(shared_.run.mutex);
          auto& last = shared_.run.iteration_end[static_cast<std::size_t>(it)];
          last = std::max(last, end);
        }
      }
      ++shared_.finished[static_cast<std::size_t>(it)];
    }
    return true;
  }

  /// The iteration the worker was in when it stopped.
  [[nodiscard]] std::int32_t iteration() const noexcept { return iteration_; }

 private:
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
  std::vector<float> take(std::int32_t kind, const Action& a, std::int32_t v, std::int64_t it) {
    const WorkerId from = kind == kActivation ? worker_of(a.owner, v - 1, a.microbatch)
                                              : worker_of(a.owner, v + 1, a.microbatch);
    const LocalKey local{kind, v, a.owner, a.microbatch};
    if (from == id_) {
      const auto found = local_.find(local);
      RECYCLE_ASSERT(found != local_.end(), "a same-worker input was not made before its use");
      std::vector<float> data = std::move(found->second);
      local_.erase(found);
      return data;
    }
    return shared_.mailboxes[shared_.flat(id_)]->take({kind, v, a.owner, a.microbatch, it},
                                                      "the input of " + where(a));
  }
  /// Keeps `data` for its reader: here when the reader is this worker, else for its SEND.
  void keep(std::int32_t kind, std::int32_t reader_v, const Action& a, std::vector<float> data) {
    const WorkerId reader = worker_of(a.owner, reader_v, a.microbatch);
    const LocalKey key{kind, reader_v, a.owner, a.microbatch};
    (reader == id_ ? local_ : outbox_)[key] = std::move(data);
  }
  void send(std::int32_t kind, std::int32_t reader_v, const Action& a, std::int64_t it) {
    const LocalKey key{kind, reader_v, a.owner, a.microbatch};
    const auto found = outbox_.find(key);
    RECYCLE_ASSERT(found != outbox_.end(), "a SEND before the compute it sends");
    const WorkerId reader = worker_of(a.owner, reader_v, a.microbatch);
    shared_.mailboxes[shared_.flat(reader)]->deliver({kind, reader_v, a.owner, a.microbatch, it},
                                                     std::move(found->second));
    outbox_.erase(found);
  }

  /// The data input of a compute action: the first stage's input, what another stage sent (after
  /// waiting for it), or what this worker made; empty when the action reads none.
  std::vector<float> fetch(const Action& a, std::int64_t it) {
    const std::int32_t v = a.virtual_stage, last = shared_.schedule.layout.virtual_stages() - 1;
    if (a.type == ActionType::kForward) {
      return v == 0 ? shared_.run.inputs[shared_.run.slot(it, a.owner, a.microbatch)]
                    : take(kActivation, a, v, it);
    }
    if ((a.type == ActionType::kBackwardInput || a.type == ActionType::kBackward) && v < last)
      return take(kGradient, a, v, it);
    return {};
  }

  void forward(const Action& a, const std::vector<float>& input) {
    const std::int32_t v = a.virtual_stage, last = shared_.schedule.layout.virtual_stages() - 1;
    Chunk& chunk = chunks_[{v, a.owner, a.microbatch}];
    std::vector<float> out = params_.at(v).forward(input, chunk);
    if (v < last) {
      keep(kActivation, v + 1, a, std::move(out));
    } else {
      last_outputs_[{v, a.owner, a.microbatch}] = std::move(out);
    }
  }

  void backward_input(const Action& a, std::int64_t it, std::vector<float> gradient) {
    const std::int32_t v = a.virtual_stage, last = shared_.schedule.layout.virtual_stages() - 1;
    if (v == last) {
      const auto found = last_outputs_.find({v, a.owner, a.microbatch});
      RECYCLE_ASSERT(found != last_outputs_.end(), "a backward before its forward");
      const double loss = StageParams::loss(
          found->second, shared_.run.targets[shared_.run.slot(it, a.owner, a.microbatch)],
          gradient);
      last_outputs_.erase(found);
      const std::lock_guard lock(shared_.run.mutex);
      const std::size_t slot = shared_.run.slot(it, a.owner, a.microbatch);
      ++shared_.run.processed[slot];
      shared_.run.losses[slot] = loss;
    }
    Chunk& chunk = chunks_.at({v, a.owner, a.microbatch});
    std::vector<float> dx = params_.at(v).backward_input(gradient, chunk);
    if (v > 0) keep(kGradient, v - 1, a, std::move(dx));
  }

  void backward_weight(const Action& a) {
    const auto found = chunks_.find({a.virtual_stage, a.owner, a.microbatch});
    RECYCLE_ASSERT(found != chunks_.end(), "a W before its I");
    params_.at(a.virtual_stage).backward_weight(found->second);
    chunks_.erase(found);
  }

  void reduce(const Action& a) {
    const std::int32_t v = a.virtual_stage;
    const std::int32_t rank = shared_.reduce_rank.at(v)[static_cast<std::size_t>(id_.dp)];
    shared_.reduce.at(v)->all_reduce(rank, params_.at(v).gradients(),
                                     "the gradient all-reduce of " + where(a));
  }

  void execute(const Action& a, std::int64_t it, std::vector<float> input) {
    const planner::Layout& layout = shared_.schedule.layout;
    switch (a.type) {
      case ActionType::kForward:
        forward(a, input);
        break;
      case ActionType::kBackwardInput:
        backward_input(a, it, std::move(input));
        break;
      case ActionType::kBackward:
        backward_input(a, it, std::move(input));
        backward_weight(a);
        break;
      case ActionType::kBackwardWeight:
        backward_weight(a);
        break;
      case ActionType::kSendF:
        send(kActivation, a.virtual_stage + 1, a, it);
        break;
      case ActionType::kSendB:
        send(kGradient, a.virtual_stage - 1, a, it);
        break;
      case ActionType::kRecvF:
      case ActionType::kRecvB:
        break;  // posted: the compute that needs the data waits for it
      case ActionType::kReduceGrad:
        reduce(a);
        break;
      case ActionType::kOptimizer:
        params_.at(a.virtual_stage)
            .step(shared_.config.learning_rate,
                  static_cast<std::int64_t>(layout.dp) * layout.microbatches);
        break;
    }
  }

  Shared& shared_;
  std::size_t index_;
  const planner::WorkerSchedule& schedule_;
  WorkerId id_;
  Params& params_;
  std::int32_t iteration_ = 0;
  std::map<ChunkKey, Chunk> chunks_;
  std::map<ChunkKey, std::vector<float>> last_outputs_;
  std::map<LocalKey, std::vector<float>> local_;   ///< inputs made here for this worker
  std::map<LocalKey, std::vector<float>> outbox_;  ///< outputs waiting for their SEND
};

/// The schedule as the runtime runs it: lowered, checked; errors name `what`.
planner::Schedule checked(const planner::Schedule& schedule, const std::string& what) {
  planner::Schedule lowered = schedule.is_lowered() ? schedule : planner::lower(schedule);
  planner::require_valid(lowered, what);
  return lowered;
}

/// The virtual stages each worker of `schedule` computes on.
std::map<WorkerId, std::vector<std::int32_t>> stages_held(const planner::Schedule& schedule) {
  std::map<WorkerId, std::vector<std::int32_t>> held;
  for (const planner::WorkerSchedule& w : schedule.workers) {
    auto& list = held[w.id];
    for (const Action& a : w.actions) {
      if (planner::is_compute(a.type) &&
          std::find(list.begin(), list.end(), a.virtual_stage) == list.end())
        list.push_back(a.virtual_stage);
    }
  }
  return held;
}

/// Lowers and checks every schedule of the run: the first, then each kill's, which must keep the
/// layout, leave out the killed worker and ask no survivor for a stage it does not hold.
std::vector<planner::Schedule> checked_plans(const planner::Schedule& schedule,
                                             const RunConfig& config) {
  std::vector<planner::Schedule> plans{checked(schedule, "schedule")};
  std::int32_t previous = 0;
  for (const Kill& kill : config.kills) {
    const planner::Schedule& now = plans.back();
    const auto held = stages_held(now);
    const std::string who = "--kill " + std::to_string(kill.worker.dp) + ":" +
                            std::to_string(kill.worker.stage) + "@" +
                            std::to_string(kill.iteration);
    if (held.count(kill.worker) == 0)
      throw InputError(who, "worker " + planner::to_string(kill.worker) + " is not running then");
    if (kill.iteration >= config.iterations || kill.iteration < 0) {
      throw InputError(who, "iteration " + std::to_string(kill.iteration) +
                                " is not run (--iterations " + std::to_string(config.iterations) +
                                ")");
    }
    if (kill.iteration < previous) {
      throw InputError(who, "kills must come in the order they strike: this one is in iteration " +
                                std::to_string(kill.iteration) + ", before the previous kill's " +
                                std::to_string(previous));
    }
    if (!(kill.fraction >= 0 && kill.fraction < 1))
      throw InputError(who, "the fraction of the iteration must be in [0, 1)");
    previous = kill.iteration;
    planner::Schedule then = checked(kill.then, who + " (the plan after it)");
    if (!(then.layout == now.layout)) throw InputError(who, "the plan after it has another layout");
    std::vector<WorkerId> failed = now.failed;
    failed.push_back(kill.worker);
    std::sort(failed.begin(), failed.end());
    if (then.failed != failed)
      throw InputError(who, "the plan after it is not for the failure set the kill makes");
    for (const auto& [id, stages] : stages_held(then)) {
      const auto before = held.find(id);
      const bool holds = before != held.end() && id != kill.worker &&
                         std::all_of(stages.begin(), stages.end(), [&](std::int32_t v) {
                           return std::find(before->second.begin(), before->second.end(), v) !=
                                  before->second.end();
                         });
      if (!holds) {
        throw InputError(who, "the plan after it gives worker " + planner::to_string(id) +
                                  " a stage it does not hold");
      }
    }
    plans.push_back(std::move(then));
  }
  return plans;
}

/// Runs `schedule` from iteration `first` until the end or until a kill is detected; returns the
/// first iteration not finished by every worker (config.iterations when all finished).
std::int32_t run_segment(RunState& run, const planner::Schedule& schedule, std::int32_t first,
                         const Kill* kill, const std::map<WorkerId, std::size_t>& result_index,
                         RunResult& result) {
  const planner::Layout& layout = schedule.layout;
  Shared shared(run, schedule);
  shared.kill = kill;
  shared.mailboxes.resize(static_cast<std::size_t>(layout.workers()));
  for (auto& m : shared.mailboxes) m = std::make_unique<Mailbox>(shared.abort);
  std::map<std::int32_t, std::vector<std::int32_t>> peers;  // v -> live dps, ascending
  for (const planner::WorkerSchedule& w : schedule.workers) {
    for (const Action& a : w.actions) {
      if (a.type != ActionType::kReduceGrad) continue;
      auto& list = peers[a.virtual_stage];
      if (std::find(list.begin(), list.end(), w.id.dp) == list.end()) list.push_back(w.id.dp);
    }
  }
  for (auto& [v, list] : peers) {
    std::sort(list.begin(), list.end());
    std::vector<std::int32_t> rank(static_cast<std::size_t>(layout.dp), -1);
    for (std::size_t r = 0; r < list.size(); ++r)
      rank[static_cast<std::size_t>(list[r])] = static_cast<std::int32_t>(r);
    shared.reduce_rank[v] = std::move(rank);
    shared.reduce[v] =
        std::make_unique<AllReduceGroup>(static_cast<std::int32_t>(list.size()), shared.abort);
  }
  shared.barrier =
      std::make_unique<Barrier>(static_cast<std::int32_t>(schedule.workers.size()), shared.abort);

  std::vector<std::unique_ptr<Worker>> workers;
  for (std::size_t i = 0; i < schedule.workers.size(); ++i)
    workers.push_back(std::make_unique<Worker>(shared, i));
  std::vector<std::size_t> timeline_start;
  for (const planner::WorkerSchedule& w : schedule.workers)
    timeline_start.push_back(result.workers[result_index.at(w.id)].timeline.size());
  std::optional<Heartbeats> heartbeats;
  if (kill != nullptr) {
    heartbeats.emplace(schedule.workers.size(), run.config.heartbeat,
                       [&](std::size_t worker, Clock::time_point last, Clock::time_point when) {
                         shared.last_beat_ns = run.ns_since_start(last);
                         shared.detect_ns = run.ns_since_start(when);
                         shared.detected = static_cast<std::int64_t>(worker);
                         shared.abort.raise("worker " +
                                            planner::to_string(schedule.workers[worker].id) +
                                            " missed its heartbeats");
                       });
    shared.heartbeats = &*heartbeats;
  }
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    threads.emplace_back([&, i] {
      const std::size_t first_index = result_index.at(schedule.workers[i].id);
      const std::vector<int>& cpus = run.config.pin_cpus;
      WorkerRun& out = result.workers[first_index];
      try {
        if (!cpus.empty()) pin_to(cpus[first_index % cpus.size()]);
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
  heartbeats.reset();
  if (shared.detected < 0) {
    if (shared.abort.raised()) throw std::runtime_error(shared.abort.reason());
    return run.config.iterations;
  }
  const WorkerId silent = schedule.workers[static_cast<std::size_t>(shared.detected)].id;
  if (kill == nullptr || silent != kill->worker || shared.kill_ns < 0) {
    throw std::runtime_error("worker " + planner::to_string(silent) +
                             " missed its heartbeats but was not killed: the machine is too "
                             "loaded for the heartbeat period");
  }

  // Drop every iteration some worker did not finish.
  const auto live = static_cast<std::int32_t>(schedule.workers.size());
  std::int32_t resume = first;
  while (resume < run.config.iterations &&
         shared.finished[static_cast<std::size_t>(resume)] == live)
    ++resume;
  Recovery recovery;
  recovery.killed = kill->worker;
  recovery.kill_ns = shared.kill_ns;
  recovery.detect_ns = shared.detect_ns;
  recovery.last_beat_ns = shared.last_beat_ns;
  recovery.resumed_at = resume;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const WorkerId id = schedule.workers[i].id;
    recovery.dropped_iterations =
        std::max(recovery.dropped_iterations, workers[i]->iteration() - resume + 1);
    auto& timeline = result.workers[result_index.at(id)].timeline;
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
  for (std::int32_t it = resume; it < run.config.iterations; ++it) {
    run.iteration_end[static_cast<std::size_t>(it)] = 0;
    for (std::int32_t owner = 0; owner < layout.dp; ++owner) {
      for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
        const std::size_t slot = run.slot(it, owner, mb);
        recovery.dropped_microbatches += run.processed[slot];
        run.processed[slot] = 0;
      }
    }
  }
  result.recoveries.push_back(recovery);
  return resume;
}

}  // namespace

RunResult run_on_cpu(const planner::Schedule& schedule, const RunConfig& config) {
  if (config.iterations < 1) throw InputError("--iterations", "must be at least 1");
  const std::vector<planner::Schedule> plans = checked_plans(schedule, config);
  for (const planner::Schedule& plan : plans)
    require_run_fits(plan, config.shape, config.iterations);
  const planner::Layout& layout = plans.front().layout;
  openblas_set_num_threads(1);  // one BLAS thread per worker thread

  RunState run(config, layout);
  const std::size_t slots = static_cast<std::size_t>(config.iterations) *
                            static_cast<std::size_t>(layout.dp) *
                            static_cast<std::size_t>(layout.microbatches);
  run.processed.assign(slots, 0);
  run.losses.assign(slots, 0.0);
  run.iteration_end.assign(static_cast<std::size_t>(config.iterations), 0);
  for (std::int32_t it = 0; it < config.iterations; ++it) {
    for (std::int32_t owner = 0; owner < layout.dp; ++owner) {
      for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
        run.inputs.push_back(synthetic_input(config.shape, config.seed, it, owner, mb));
        run.targets.push_back(synthetic_target(config.shape, config.seed, it, owner, mb));
      }
    }
  }
  run.params.resize(static_cast<std::size_t>(layout.workers()));
  run.snapshots.resize(static_cast<std::size_t>(layout.workers()));
  RunResult result;
  std::map<WorkerId, std::size_t> result_index;
  for (const auto& [id, stages] : stages_held(plans.front())) {
    result_index[id] = result.workers.size();
    result.workers.emplace_back().id = id;
    for (const std::int32_t v : stages)
      run.params[run.flat(id)].emplace(v, StageParams(config.shape, v, config.seed));
  }

  run.start = Clock::now();
  std::int32_t next = 0;
  for (std::size_t segment = 0; next < config.iterations; ++segment) {
    const Kill* kill = segment < config.kills.size() ? &config.kills[segment] : nullptr;
    result.segment_start.push_back(next);
    next = run_segment(run, plans[segment], next, kill, result_index, result);
    if (next < config.iterations) result.recoveries.back().resume_ns = run.now_ns();
  }
  // A kill strikes in its iteration, which is never before the previous kill's resumption.
  RECYCLE_ASSERT(result.segment_start.size() == plans.size(), "a kill did not strike");

  for (WorkerRun& w : result.workers) {
    if (w.killed) continue;
    for (auto& [v, p] : run.params[run.flat(w.id)]) w.parameters.emplace_back(v, p.parameters());
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
