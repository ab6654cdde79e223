#include "executor/runtime.hpp"

#include <cblas.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "core/error.hpp"
#include "executor/channels.hpp"
#include "planner/lower.hpp"
#include "planner/validator.hpp"

namespace recycle::executor {

using planner::Action;
using planner::ActionType;
using planner::WorkerId;

double RunResult::iteration_time_s() const {
  if (iteration_end_ns.empty()) return 0;
  if (iteration_end_ns.size() == 1) return static_cast<double>(iteration_end_ns.front()) * 1e-9;
  return static_cast<double>(iteration_end_ns.back() - iteration_end_ns.front()) * 1e-9 /
         static_cast<double>(iteration_end_ns.size() - 1);
}

namespace {

constexpr std::int32_t kActivation = 0;  ///< message kind: input of F(v)
constexpr std::int32_t kGradient = 1;    ///< message kind: output gradient for I/B(v)

using Clock = std::chrono::steady_clock;
using ChunkKey = std::tuple<std::int32_t, std::int32_t, std::int32_t>;  ///< (v, owner, mb)
using LocalKey = std::tuple<std::int32_t, std::int32_t, std::int32_t, std::int32_t>;

/// What every worker thread shares.
struct Shared {
  const planner::Schedule& schedule;
  const RunConfig& config;
  planner::RouteTable routes;
  Abort abort;
  std::vector<std::unique_ptr<Mailbox>> mailboxes;  ///< by flat worker id (dp x pp + stage)
  std::map<std::int32_t, std::unique_ptr<AllReduceGroup>> reduce;  ///< by virtual stage
  std::map<std::int32_t, std::vector<std::int32_t>> reduce_rank;   ///< v -> rank by dp (-1: none)
  std::unique_ptr<Barrier> barrier;
  Clock::time_point start;
  std::mutex mutex;                     ///< guards what follows
  std::vector<std::int32_t> processed;  ///< per iteration x owner x micro-batch
  std::vector<double> losses;           ///< the same shape
  std::vector<std::int64_t> iteration_end;
  /// Per iteration x owner x micro-batch: the first stage's input and the last stage's target,
  /// made before the clock starts (data loading is not part of what is timed).
  std::vector<std::vector<float>> inputs, targets;

  Shared(const planner::Schedule& s, const RunConfig& c)
      : schedule(s), config(c), routes(s), abort(c.wait_limit) {}

  std::size_t flat(WorkerId id) const {
    return static_cast<std::size_t>(id.dp) * static_cast<std::size_t>(schedule.layout.pp) +
           static_cast<std::size_t>(id.stage);
  }
  std::size_t slot(std::int64_t iteration, std::int32_t owner, std::int32_t mb) const {
    const planner::Layout& l = schedule.layout;
    return (static_cast<std::size_t>(iteration) * static_cast<std::size_t>(l.dp) +
            static_cast<std::size_t>(owner)) *
               static_cast<std::size_t>(l.microbatches) +
           static_cast<std::size_t>(mb);
  }
  std::int64_t now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  }
};

class Worker {
 public:
  Worker(Shared& shared, std::size_t index)
      : shared_(shared), schedule_(shared.schedule.workers[index]), id_(schedule_.id) {
    for (const Action& a : schedule_.actions) {
      if (planner::is_compute(a.type) && params_.count(a.virtual_stage) == 0) {
        params_.emplace(a.virtual_stage,
                        StageParams(shared.config.shape, a.virtual_stage, shared.config.seed));
      }
    }
  }

  void run(WorkerRun& out) {
    const std::int32_t iterations = shared_.config.iterations;
    out.id = id_;
    out.timeline.reserve(schedule_.actions.size() * static_cast<std::size_t>(iterations));
    for (std::int32_t it = 0; it < iterations; ++it) {
      bool stepped = false;
      for (const Action& a : schedule_.actions) {
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
          const std::lock_guard lock(shared_.mutex);
          auto& last = shared_.iteration_end[static_cast<std::size_t>(it)];
          last = std::max(last, end);
        }
      }
    }
    for (auto& [v, p] : params_) out.parameters.emplace_back(v, p.parameters());
  }

 private:
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
      return v == 0 ? shared_.inputs[shared_.slot(it, a.owner, a.microbatch)]
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
          found->second, shared_.targets[shared_.slot(it, a.owner, a.microbatch)], gradient);
      last_outputs_.erase(found);
      const std::lock_guard lock(shared_.mutex);
      const std::size_t slot = shared_.slot(it, a.owner, a.microbatch);
      ++shared_.processed[slot];
      shared_.losses[slot] = loss;
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
  const planner::WorkerSchedule& schedule_;
  WorkerId id_;
  std::map<std::int32_t, StageParams> params_;
  std::map<ChunkKey, Chunk> chunks_;
  std::map<ChunkKey, std::vector<float>> last_outputs_;
  std::map<LocalKey, std::vector<float>> local_;   ///< inputs made here for this worker
  std::map<LocalKey, std::vector<float>> outbox_;  ///< outputs waiting for their SEND
};

/// The schedule as the runtime runs it: lowered, checked.
planner::Schedule checked(const planner::Schedule& schedule) {
  planner::Schedule lowered = schedule.is_lowered() ? schedule : planner::lower(schedule);
  const std::vector<planner::Violation> violations = planner::validate(lowered);
  if (!violations.empty()) {
    throw InputError("schedule",
                     violations.front().message +
                         (violations.size() > 1
                              ? " (and " + std::to_string(violations.size() - 1) + " more problems)"
                              : ""));
  }
  return lowered;
}

}  // namespace

RunResult run_on_cpu(const planner::Schedule& schedule, const RunConfig& config) {
  if (config.iterations < 1) throw InputError("--iterations", "must be at least 1");
  const planner::Schedule lowered = checked(schedule);
  const planner::Layout& layout = lowered.layout;
  openblas_set_num_threads(1);  // one BLAS thread per worker thread

  Shared shared(lowered, config);
  shared.mailboxes.resize(static_cast<std::size_t>(layout.workers()));
  for (auto& m : shared.mailboxes) m = std::make_unique<Mailbox>(shared.abort);
  std::map<std::int32_t, std::vector<std::int32_t>> peers;  // v -> live dps, ascending
  for (const planner::WorkerSchedule& w : lowered.workers) {
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
      std::make_unique<Barrier>(static_cast<std::int32_t>(lowered.workers.size()), shared.abort);
  const std::size_t slots = static_cast<std::size_t>(config.iterations) *
                            static_cast<std::size_t>(layout.dp) *
                            static_cast<std::size_t>(layout.microbatches);
  shared.processed.assign(slots, 0);
  shared.losses.assign(slots, 0.0);
  shared.iteration_end.assign(static_cast<std::size_t>(config.iterations), 0);
  for (std::int32_t it = 0; it < config.iterations; ++it) {
    for (std::int32_t owner = 0; owner < layout.dp; ++owner) {
      for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
        shared.inputs.push_back(synthetic_input(config.shape, config.seed, it, owner, mb));
        shared.targets.push_back(synthetic_target(config.shape, config.seed, it, owner, mb));
      }
    }
  }

  std::vector<std::unique_ptr<Worker>> workers;
  for (std::size_t i = 0; i < lowered.workers.size(); ++i)
    workers.push_back(std::make_unique<Worker>(shared, i));
  RunResult result;
  result.workers.resize(lowered.workers.size());
  shared.start = Clock::now();
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        workers[i]->run(result.workers[i]);
      } catch (const std::exception& e) {
        shared.abort.raise("worker " + planner::to_string(lowered.workers[i].id) + ": " + e.what());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (shared.abort.raised()) throw std::runtime_error(shared.abort.reason());

  for (std::int32_t it = 0; it < config.iterations; ++it) {
    double sum = 0;
    for (std::int32_t owner = 0; owner < layout.dp; ++owner) {
      for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
        const std::size_t slot = shared.slot(it, owner, mb);
        if (shared.processed[slot] != 1) {
          throw std::runtime_error("micro-batch " + std::to_string(mb) + " of pipeline " +
                                   std::to_string(owner) + " was processed " +
                                   std::to_string(shared.processed[slot]) + " times in iteration " +
                                   std::to_string(it));
        }
        sum += shared.losses[slot];
        result.microbatches_processed += shared.processed[slot];
      }
    }
    result.loss.push_back(sum / static_cast<double>(layout.dp * layout.microbatches));
  }
  result.iteration_end_ns = shared.iteration_end;
  return result;
}

}  // namespace recycle::executor
