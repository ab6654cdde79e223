#include "sim/simulator.hpp"

#include <algorithm>
#include <limits>
#include <tuple>

#include "core/error.hpp"
#include "planner/lower.hpp"
#include "sim/event_queue.hpp"

namespace recycle::sim {

namespace {

using planner::Action;
using planner::ActionType;
using planner::WorkerId;

enum EventKind : std::uint32_t {
  kComputeDone,     ///< subject: worker; its current action has ended
  kWake,            ///< subject: worker; the transfer its RECV waits for has arrived
  kCollectiveDone,  ///< subject: collective record
};

enum class Wait : std::uint8_t { kNone, kCompute, kTransfer, kCollective, kBarrier };

/// One action of a worker's list with what running it needs, worked out once before the run.
struct Step {
  ActionType type = ActionType::kForward;
  Nanos duration = 0;         ///< compute and OPT time; a SEND's transfer time
  std::int32_t peer = -1;     ///< SEND: the receiving worker
  std::int32_t peer_pc = -1;  ///< SEND: position of the matching RECV in the receiver's list
};

struct WorkerState {
  std::int32_t iteration = 0;
  std::int32_t pc = 0;     ///< position in the list
  std::size_t record = 0;  ///< record of the current action (records run on consecutively)
  std::int32_t prev = -1;  ///< record of the last finished action
  Nanos free_at = 0;       ///< when that action ended
  Wait wait = Wait::kNone;
};

/// A send or receive queue of one worker: busy until free_at with transfer `last`.
struct Queue {
  Nanos free_at = 0;
  std::int32_t last = -1;
};

/// Arrivals at a collective or at the optimizer barrier.
struct Gather {
  std::int32_t arrived = 0;
  NodeRef last;  ///< the action after which the latest arrival came
};

/// What a RECV expects: the direction, its virtual stage, micro-batch and owner.
using RecvKey = std::tuple<ActionType, std::int32_t, std::int32_t, std::int32_t>;

class Simulation {
 public:
  Simulation(const planner::Schedule& schedule, const CostModel& model, const SimOptions& options);
  Timeline run();

 private:
  void build_steps();
  void match_sends();
  void advance(std::int32_t w);
  void finish(std::int32_t w, Nanos end);
  void post(std::int32_t w, const Step& step, std::size_t send_record);
  void arrive_collective(std::int32_t w);
  void arrive_barrier(std::int32_t w);
  void end_collective(std::int32_t collective);
  void release_barrier();
  void report_deadlock() const;

  [[nodiscard]] std::size_t current(std::int32_t w) const noexcept {
    return state_[static_cast<std::size_t>(w)].record;
  }
  [[nodiscard]] NodeRef prev_ref(std::int32_t w) const noexcept {
    const std::int32_t prev = state_[static_cast<std::size_t>(w)].prev;
    return prev < 0 ? NodeRef{} : NodeRef{prev, NodeKind::kAction};
  }
  [[nodiscard]] std::string where(std::int32_t w, const Action& a) const {
    const WorkerId id = schedule_.workers[static_cast<std::size_t>(w)].id;
    return "worker " + planner::to_string(id) + " action " + planner::to_token(a, id.dp);
  }

  const planner::Schedule& schedule_;
  const CostModel& model_;
  const SimOptions& options_;
  std::vector<std::vector<Step>> steps_;          ///< per worker, parallel to its action list
  std::vector<std::vector<std::int32_t>> peers_;  ///< per stage: its live workers
  std::vector<Nanos> all_reduce_time_;            ///< per stage
  std::vector<WorkerState> state_;
  std::vector<Queue> send_queue_;
  std::vector<Queue> recv_queue_;
  std::vector<Gather> collective_;  ///< per stage: the all-reduce being gathered
  Gather barrier_;
  EventQueue queue_;
  Timeline timeline_;
};

Simulation::Simulation(const planner::Schedule& schedule, const CostModel& model,
                       const SimOptions& options)
    : schedule_(schedule), model_(model), options_(options) {
  const planner::Layout& layout = schedule.layout;
  const std::size_t workers = schedule.workers.size();
  if (options.iterations < 1) throw InputError("--iterations", "expected at least 1 iteration");
  if (workers == 0) throw InputError(options.source, "the schedule has no live workers");
  peers_.resize(static_cast<std::size_t>(layout.pp));
  std::vector<std::int32_t> seen(
      static_cast<std::size_t>(layout.dp) * static_cast<std::size_t>(layout.pp), 0);
  timeline_.iterations = options.iterations;
  timeline_.first_record.push_back(0);
  for (std::size_t w = 0; w < workers; ++w) {
    const planner::WorkerSchedule& ws = schedule.workers[w];
    const WorkerId id = ws.id;
    if (id.dp < 0 || id.dp >= layout.dp || id.stage < 0 || id.stage >= layout.pp) {
      throw InputError(options.source,
                       "worker " + planner::to_string(id) + " is outside the layout");
    }
    if (seen[static_cast<std::size_t>(id.dp * layout.pp + id.stage)]++ > 0) {
      throw InputError(options.source, "worker " + planner::to_string(id) + " is listed twice");
    }
    if (ws.actions.empty())
      throw InputError(options.source, "worker " + planner::to_string(id) + " has no actions");
    peers_[static_cast<std::size_t>(id.stage)].push_back(static_cast<std::int32_t>(w));
    timeline_.first_record.push_back(timeline_.first_record.back() +
                                     ws.actions.size() *
                                         static_cast<std::size_t>(options.iterations));
  }
  if (timeline_.first_record.back() >
      static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    throw InputError("--iterations", "too many actions to simulate (" +
                                         std::to_string(timeline_.first_record.back()) +
                                         " over all iterations); simulate fewer iterations");
  }
  for (std::int32_t s = 0; s < layout.pp; ++s) {
    std::vector<WorkerId> ids;
    for (const std::int32_t w : peers_[static_cast<std::size_t>(s)]) {
      ids.push_back(schedule.workers[static_cast<std::size_t>(w)].id);
    }
    all_reduce_time_.push_back(model.cluster.all_reduce_time(ids, model.gradient_bytes(s)));
  }
  build_steps();
  match_sends();
  timeline_.actions.resize(timeline_.first_record.back());
  std::size_t sends = 0;
  for (const auto& steps : steps_) {
    sends += static_cast<std::size_t>(
        std::count_if(steps.begin(), steps.end(), [](const Step& s) { return s.peer >= 0; }));
  }
  timeline_.transfers.reserve(sends * static_cast<std::size_t>(options.iterations));
  timeline_.collectives.reserve(static_cast<std::size_t>(layout.pp) *
                                static_cast<std::size_t>(options.iterations));
  timeline_.iteration_ends.assign(static_cast<std::size_t>(options.iterations), 0);
  state_.resize(workers);
  for (std::size_t w = 0; w < workers; ++w) state_[w].record = timeline_.first_record[w];
  send_queue_.resize(workers);
  recv_queue_.resize(workers);
  collective_.resize(static_cast<std::size_t>(layout.pp));
  queue_.reserve(2 * workers);
}

void Simulation::build_steps() {
  steps_.resize(schedule_.workers.size());
  for (std::size_t w = 0; w < schedule_.workers.size(); ++w) {
    const planner::WorkerSchedule& ws = schedule_.workers[w];
    std::vector<Step>& steps = steps_[w];
    steps.reserve(ws.actions.size());
    for (const Action& a : ws.actions) {
      Step step;
      step.type = a.type;
      if (planner::is_compute(a.type)) step.duration = model_.compute.duration(a);
      if (a.type == ActionType::kOptimizer) {
        const auto stage = static_cast<std::size_t>(ws.id.stage);
        step.duration =
            stage < model_.compute.optimizer.size() ? model_.compute.optimizer[stage] : 0;
      }
      steps.push_back(step);
    }
  }
}

void Simulation::match_sends() {
  const planner::Layout& layout = schedule_.layout;
  const planner::RouteTable routes(schedule_);
  std::vector<std::int32_t> index_of(
      static_cast<std::size_t>(layout.dp) * static_cast<std::size_t>(layout.pp), -1);
  for (std::size_t w = 0; w < schedule_.workers.size(); ++w) {
    const WorkerId id = schedule_.workers[w].id;
    index_of[static_cast<std::size_t>(id.dp * layout.pp + id.stage)] = static_cast<std::int32_t>(w);
  }
  // Each worker's RECVs, sorted by what they expect, with whether a SEND has claimed them.
  struct Expected {
    RecvKey key;
    std::int32_t pc = 0;
    bool matched = false;
  };
  std::vector<std::vector<Expected>> expected(schedule_.workers.size());
  for (std::size_t w = 0; w < schedule_.workers.size(); ++w) {
    const auto& actions = schedule_.workers[w].actions;
    for (std::size_t pc = 0; pc < actions.size(); ++pc) {
      const Action& a = actions[pc];
      if (a.type != ActionType::kRecvF && a.type != ActionType::kRecvB) continue;
      expected[w].push_back(
          {{a.type, a.virtual_stage, a.microbatch, a.owner}, static_cast<std::int32_t>(pc)});
    }
    std::sort(expected[w].begin(), expected[w].end(), [](const Expected& x, const Expected& y) {
      return std::tie(x.key, x.pc) < std::tie(y.key, y.pc);
    });
    for (std::size_t i = 1; i < expected[w].size(); ++i) {
      if (expected[w][i].key == expected[w][i - 1].key) {
        const Action& a = actions[static_cast<std::size_t>(expected[w][i].pc)];
        throw InputError(options_.source,
                         where(static_cast<std::int32_t>(w), a) + " is listed twice");
      }
    }
  }
  for (std::size_t w = 0; w < schedule_.workers.size(); ++w) {
    const WorkerId self = schedule_.workers[w].id;
    const auto& actions = schedule_.workers[w].actions;
    for (std::size_t pc = 0; pc < actions.size(); ++pc) {
      const Action& a = actions[pc];
      if (a.type != ActionType::kSendF && a.type != ActionType::kSendB) continue;
      const bool forward = a.type == ActionType::kSendF;
      const std::int32_t to_stage = a.virtual_stage + (forward ? 1 : -1);
      // Messages are built only on the error path: this loop runs once per SEND.
      const auto fail = [&](const std::string& problem) {
        throw InputError(options_.source, where(static_cast<std::int32_t>(w), a) + problem);
      };
      if (a.owner < 0 || a.owner >= layout.dp || a.microbatch < 0 ||
          a.microbatch >= layout.microbatches) {
        fail(": owner or micro-batch outside the layout");
      }
      if (to_stage < 0 || to_stage >= layout.virtual_stages()) {
        fail(std::string(": sends ") + (forward ? "past the last" : "before the first") +
             " virtual stage");
      }
      const WorkerId to = routes.worker_of(a.owner, to_stage, a.microbatch);
      const std::int32_t r = index_of[static_cast<std::size_t>(to.dp * layout.pp + to.stage)];
      const RecvKey key{forward ? ActionType::kRecvF : ActionType::kRecvB, to_stage, a.microbatch,
                        a.owner};
      const auto missing = [&] {
        const Action recv{std::get<0>(key), to_stage, a.microbatch, a.owner};
        return ": no matching " + planner::to_token(recv, to.dp) + " on worker " +
               planner::to_string(to);
      };
      if (r < 0) fail(missing() + " (not a live worker)");
      auto& list = expected[static_cast<std::size_t>(r)];
      const auto it =
          std::lower_bound(list.begin(), list.end(), key,
                           [](const Expected& e, const RecvKey& k) { return e.key < k; });
      if (it == list.end() || it->key != key) fail(missing());
      if (it->matched) fail(" is listed twice");
      it->matched = true;
      Step& step = steps_[w][pc];
      step.peer = r;
      step.peer_pc = it->pc;
      step.duration = model_.cluster.transfer_time(self, to, model_.send_bytes(a));
    }
  }
  for (std::size_t w = 0; w < schedule_.workers.size(); ++w) {
    for (const Expected& e : expected[w]) {
      if (e.matched) continue;
      const Action& a = schedule_.workers[w].actions[static_cast<std::size_t>(e.pc)];
      throw InputError(options_.source,
                       where(static_cast<std::int32_t>(w), a) + ": no SEND delivers it");
    }
  }
}

Timeline Simulation::run() {
  for (std::size_t w = 0; w < state_.size(); ++w) advance(static_cast<std::int32_t>(w));
  while (const auto event = queue_.pop()) {
    // With thousands of workers their states do not stay in cache between two turns: fetch the
    // next event's worker while this one is handled.
    if (const Event* next = queue_.peek(); next != nullptr && next->kind != kCollectiveDone) {
      __builtin_prefetch(&state_[static_cast<std::size_t>(next->subject)]);
      __builtin_prefetch(&steps_[static_cast<std::size_t>(next->subject)]);
    }
    switch (event->kind) {
      case kComputeDone:
        finish(event->subject, event->time);
        advance(event->subject);
        break;
      case kWake:
        advance(event->subject);
        break;
      case kCollectiveDone:
        end_collective(event->subject);
        break;
      default:
        RECYCLE_ASSERT(false, "unknown event kind");
    }
  }
  report_deadlock();
  timeline_.events = queue_.popped();
  return std::move(timeline_);
}

void Simulation::advance(std::int32_t w) {
  WorkerState& s = state_[static_cast<std::size_t>(w)];
  const std::vector<Step>& steps = steps_[static_cast<std::size_t>(w)];
  const Nanos now = queue_.now();
  while (s.iteration < options_.iterations) {
    const Step& step = steps[static_cast<std::size_t>(s.pc)];
    const std::size_t record = current(w);
    ActionRecord& r = timeline_.actions[record];
    switch (step.type) {
      case ActionType::kSendF:
      case ActionType::kSendB:
        r.start = now;
        r.cause = prev_ref(w);
        post(w, step, record);
        finish(w, now);
        continue;
      case ActionType::kRecvF:
      case ActionType::kRecvB: {
        if (r.cause.kind != NodeKind::kTransfer) {  // not posted yet: the SEND will wake us
          s.wait = Wait::kTransfer;
          return;
        }
        const Nanos arrival = timeline_.transfers[static_cast<std::size_t>(r.cause.index)].end;
        if (arrival > now) {
          s.wait = Wait::kTransfer;
          queue_.push(arrival, kWake, w);
          return;
        }
        r.start = now;
        if (arrival <= s.free_at) r.cause = prev_ref(w);  // the data was there before the stream
        finish(w, now);
        continue;
      }
      case ActionType::kReduceGrad:
        r.start = now;
        arrive_collective(w);
        return;
      case ActionType::kOptimizer:
        if (!options_.staggered_optimizer) {
          arrive_barrier(w);
          return;
        }
        [[fallthrough]];
      default:  // F, I, W, B, and OPT with a staggered optimizer
        r.start = now;
        r.cause = prev_ref(w);
        if (step.duration > 0) {
          s.wait = Wait::kCompute;
          queue_.push(now + step.duration, kComputeDone, w);
          // The worker comes back here when the compute ends, after the other workers have had
          // their turns; fetching its next step and record now turns two cache misses into hits.
          __builtin_prefetch(&step + 1);
          __builtin_prefetch(&r + 1, 1);
          return;
        }
        finish(w, now);
        continue;
    }
  }
}

void Simulation::finish(std::int32_t w, Nanos end) {
  WorkerState& s = state_[static_cast<std::size_t>(w)];
  const std::size_t record = current(w);
  timeline_.actions[record].end = end;
  s.prev = static_cast<std::int32_t>(record);
  ++s.record;
  s.free_at = end;
  s.wait = Wait::kNone;
  if (static_cast<std::size_t>(++s.pc) < steps_[static_cast<std::size_t>(w)].size()) return;
  Nanos& iteration_end = timeline_.iteration_ends[static_cast<std::size_t>(s.iteration)];
  iteration_end = std::max(iteration_end, end);
  s.pc = 0;
  ++s.iteration;
}

void Simulation::post(std::int32_t w, const Step& step, std::size_t send_record) {
  const Nanos now = queue_.now();
  Queue& out = send_queue_[static_cast<std::size_t>(w)];
  Queue& in = recv_queue_[static_cast<std::size_t>(step.peer)];
  Nanos start = now;
  NodeRef cause{static_cast<std::int32_t>(send_record), NodeKind::kAction};
  if (out.free_at > start) {
    start = out.free_at;
    cause = {out.last, NodeKind::kTransfer};
  }
  if (in.free_at > start) {
    start = in.free_at;
    cause = {in.last, NodeKind::kTransfer};
  }
  const auto transfer = static_cast<std::int32_t>(timeline_.transfers.size());
  const std::int32_t iteration = state_[static_cast<std::size_t>(w)].iteration;
  const Nanos arrival = start + step.duration;
  timeline_.transfers.push_back(
      {start, arrival, w, step.peer, static_cast<std::int32_t>(send_record), iteration, cause});
  out = {arrival, transfer};
  in = {arrival, transfer};
  const auto peer = static_cast<std::size_t>(step.peer);
  const std::size_t recv_record = timeline_.first_record[peer] +
                                  static_cast<std::size_t>(iteration) * steps_[peer].size() +
                                  static_cast<std::size_t>(step.peer_pc);
  timeline_.actions[recv_record].cause = {transfer, NodeKind::kTransfer};
  const bool receiver_waits = state_[static_cast<std::size_t>(step.peer)].wait == Wait::kTransfer &&
                              current(step.peer) == recv_record;
  if (receiver_waits) queue_.push(arrival, kWake, step.peer);
}

void Simulation::arrive_collective(std::int32_t w) {
  const WorkerId id = schedule_.workers[static_cast<std::size_t>(w)].id;
  const auto stage = static_cast<std::size_t>(id.stage);
  state_[static_cast<std::size_t>(w)].wait = Wait::kCollective;
  Gather& g = collective_[stage];
  ++g.arrived;
  g.last = prev_ref(w);
  if (static_cast<std::size_t>(g.arrived) < peers_[stage].size()) return;
  const Nanos now = queue_.now();
  const auto index = static_cast<std::int32_t>(timeline_.collectives.size());
  timeline_.collectives.push_back({now, now + all_reduce_time_[stage], id.stage,
                                   state_[static_cast<std::size_t>(w)].iteration, g.last});
  g = {};
  queue_.push(now + all_reduce_time_[stage], kCollectiveDone, index);
}

void Simulation::end_collective(std::int32_t collective) {
  // Copies, not references: running a peer on may start another collective and grow the vector.
  const Nanos end = timeline_.collectives[static_cast<std::size_t>(collective)].end;
  const auto stage =
      static_cast<std::size_t>(timeline_.collectives[static_cast<std::size_t>(collective)].stage);
  for (const std::int32_t w : peers_[stage]) {
    RECYCLE_ASSERT(state_[static_cast<std::size_t>(w)].wait == Wait::kCollective,
                   "a peer left an all-reduce early");
    timeline_.actions[current(w)].cause = {collective, NodeKind::kCollective};
    finish(w, end);
    advance(w);
  }
}

void Simulation::arrive_barrier(std::int32_t w) {
  state_[static_cast<std::size_t>(w)].wait = Wait::kBarrier;
  ++barrier_.arrived;
  barrier_.last = prev_ref(w);
  if (static_cast<std::size_t>(barrier_.arrived) == state_.size()) release_barrier();
}

void Simulation::release_barrier() {
  const Nanos now = queue_.now();
  const NodeRef last = barrier_.last;
  barrier_ = {};
  // Start every OPT first, then run on the ones that took no time: a worker running on must not
  // see the others still parked at this barrier.
  std::vector<std::int32_t> done_now;
  for (std::size_t i = 0; i < state_.size(); ++i) {
    const auto w = static_cast<std::int32_t>(i);
    WorkerState& s = state_[i];
    ActionRecord& r = timeline_.actions[current(w)];
    r.start = now;
    r.cause = s.free_at == now ? prev_ref(w) : last;
    const Nanos duration = steps_[i][static_cast<std::size_t>(s.pc)].duration;
    if (duration > 0) {
      s.wait = Wait::kCompute;
      queue_.push(now + duration, kComputeDone, w);
    } else {
      done_now.push_back(w);
    }
  }
  for (const std::int32_t w : done_now) {
    finish(w, now);
    advance(w);
  }
}

void Simulation::report_deadlock() const {
  std::string stuck;
  std::size_t count = 0;
  for (std::size_t w = 0; w < state_.size(); ++w) {
    const WorkerState& s = state_[w];
    if (s.iteration >= options_.iterations) continue;
    if (count++ > 0) continue;
    const Action& a = schedule_.workers[w].actions[static_cast<std::size_t>(s.pc)];
    stuck =
        where(static_cast<std::int32_t>(w), a) + " of iteration " + std::to_string(s.iteration + 1);
  }
  if (count == 0) return;
  throw InputError(
      options_.source,
      "the schedule deadlocks: " + stuck + " never runs" +
          (count > 1 ? " (" + std::to_string(count - 1) + " more workers stuck)" : "") +
          "; `recycle plan --check` says why");
}

}  // namespace

bool is_lowered(const planner::Schedule& schedule) noexcept {
  return std::any_of(
      schedule.workers.begin(), schedule.workers.end(), [](const planner::WorkerSchedule& w) {
        return std::any_of(w.actions.begin(), w.actions.end(),
                           [](const Action& a) { return !planner::is_compute(a.type); });
      });
}

SimRun simulate(planner::Schedule schedule, CostModel model, SimOptions options) {
  SimRun run;
  run.schedule = is_lowered(schedule) ? std::move(schedule) : planner::lower(schedule);
  run.model = std::move(model);
  run.options = std::move(options);
  run.timeline = Simulation(run.schedule, run.model, run.options).run();
  return run;
}

}  // namespace recycle::sim
