// One segment of a run (executor/run_schedule.hpp): a schedule run from an iteration until its
// end or until a kill is detected, the processes' agreement on what happened (Agreed), and the
// all-reduce by message of a multi-process run. The driver switches segments at each kill.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "core/parallel.hpp"

#include "executor/run_worker.hpp"

namespace recycle::executor::detail {

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

  explicit Agreed(const std::vector<SegmentFacts>& all);
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
  const auto wanted = static_cast<std::size_t>(std::count(here.begin(), here.end(), true));
  for (std::size_t i = 0; i < workers.size(); ++i) {
    if (!here[i]) continue;
    const auto start = [&](auto&& body) {
      try {
        threads.emplace_back(std::forward<decltype(body)>(body));
      } catch (const std::system_error& e) {
        // The workers started wait on ones that never will: the abort wakes them.
        shared.abort.raise("a worker thread could not start");
        for (std::thread& t : threads) t.join();
        refuse_thread(threads.size(), wanted, e, "validate");
      }
    };
    start([&, i] {
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

}  // namespace recycle::executor::detail
