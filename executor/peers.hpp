// The processes of a multi-process run, as the runtime (executor/run_schedule.hpp) sees them:
// which workers run in this process, how a message reaches a worker in another, how an abort,
// a heartbeat and a finished iteration are told to the others, and how the processes agree at the
// end of each schedule and hand their part of the result to the first process. A run in one
// process has none (a null Peers*). executor/mpi/ implements it on MPI.
//
// Workers are placed as GPUs are on nodes: in blocks of the layout's flat ids (dp x pp + stage),
// worker (d, s) in process (d x pp + s) x processes / (dp x pp). A failed worker leaves its slot
// empty, as a failed GPU does its node.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "executor/channels.hpp"
#include "executor/heartbeat.hpp"
#include "executor/runtime.hpp"

namespace recycle::executor {

/// Where the messages of other processes go while one schedule runs: handed on only while it is
/// open.
struct SegmentLinks {
  std::int64_t segment = 0;  ///< the schedule's number in the run
  /// Hands a message from another process to worker `reader` (flat id: dp x pp + stage) of this
  /// process; called by whichever thread takes the message in, one message at a time.
  std::function<void(std::size_t reader, const MessageKey& key, std::vector<float> data)> deliver;
  Abort* abort = nullptr;                                      ///< raised by a forwarded abort
  std::vector<std::atomic<std::int32_t>>* finished = nullptr;  ///< counted by forwarded ends
};

/// What one process knows when a schedule stops (every field over its own workers).
struct SegmentFacts {
  std::int64_t kill_ns = -1;              ///< when the kill struck, if its worker is here
  std::int64_t detected = -1;             ///< the worker (schedule index) this process found silent
  std::int64_t detect_ns = -1;            ///< when
  std::int64_t last_beat_ns = -1;         ///< that worker's last beat as heard here
  std::int64_t last_iteration = -1;       ///< the latest iteration a worker here was in
  std::int64_t dropped_microbatches = 0;  ///< losses computed here in dropped iterations
  std::int32_t raised = 0;                ///< 1: the abort was raised here
  std::array<char, 512> reason{};         ///< its reason, cut to fit
};

/// The process worker `flat` (of a layout of `workers`) runs in, of `processes`: blocks of flat
/// ids, as GPUs on nodes.
[[nodiscard]] inline int process_of(std::size_t flat, std::size_t workers, int processes) {
  return static_cast<int>(flat * static_cast<std::size_t>(processes) /
                          (workers == 0 ? std::size_t{1} : workers));
}

class Peers {
 public:
  virtual ~Peers() = default;
  Peers() = default;
  Peers(const Peers&) = delete;
  Peers& operator=(const Peers&) = delete;

  /// The first process, which returns the whole result.
  [[nodiscard]] virtual bool root() const = 0;
  /// The process the worker of flat id `flat` (of a layout of `workers`) runs in.
  [[nodiscard]] int process_of(std::size_t flat, std::size_t workers) const {
    return executor::process_of(flat, workers, size());
  }
  [[nodiscard]] bool here(std::size_t flat, std::size_t workers) const {
    return process_of(flat, workers) == rank();
  }
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;  ///< how many processes
  /// This process among the processes on its machine, which share its GPUs.
  struct Node {
    int rank = 0;  ///< among them
    int size = 1;  ///< how many
  };
  [[nodiscard]] virtual Node node() const = 0;
  /// Every process waits until all have called it.
  virtual void barrier() = 0;

  /// Starts handing the messages of schedule `links.segment` to `links`.
  virtual void open(SegmentLinks links) = 0;
  /// Takes in at most one message from another process and hands it on; whether it took one.
  /// Called by a thread waiting on a mailbox (Mailbox::poll_while_waiting), whose core would
  /// otherwise be idle; a progress thread takes in the rest.
  virtual bool take_in() = 0;
  /// Also counts a forwarded heartbeat (Heartbeats::heard); may be null.
  virtual void listen(Heartbeats* heartbeats) = 0;
  /// Stops delivering: later messages of this schedule are dropped. Every process calls it once
  /// its threads have stopped sending.
  virtual void close() = 0;

  /// To flat worker id `reader` in process `to`: a message of the open schedule.
  virtual void send(int to, std::size_t reader, const MessageKey& key,
                    const std::vector<float>& data) = 0;
  virtual void forward_abort(const std::string& reason) = 0;
  virtual void forward_beat(std::size_t worker) = 0;
  /// A worker here finished `iteration`.
  virtual void forward_finished(std::int32_t iteration) = 0;

  /// Every process's facts, in process order (an all-gather).
  [[nodiscard]] virtual std::vector<SegmentFacts> agree(const SegmentFacts& mine) = 0;
  /// Sums `counts` element-wise over the processes; every process gets the sums.
  [[nodiscard]] virtual std::vector<std::int32_t> sum(const std::vector<std::int32_t>& counts) = 0;

  /// The end of the run. The root gets every process's workers (the entries of `result.workers`
  /// they ran: those `mine` marks in theirs), their micro-batch counts and losses (summed: each
  /// slot is computed in one process) and iteration ends (the latest); the others hand theirs
  /// over.
  virtual void collect(RunResult& result, const std::vector<bool>& mine,
                       std::vector<std::int32_t>& processed, std::vector<double>& losses,
                       std::vector<std::int64_t>& iteration_end) = 0;
};

}  // namespace recycle::executor
