// Multi-process runs through MPI: `mpirun -np N recycle validate ...` runs a backend's workers
// in N processes (on one node or several), worker (d, s) in process
// (d x pp + s) x N / (dp x pp), as GPUs on nodes (executor/peers.hpp). Process 0 runs the command
// as ever; when it runs a schedule, it sends the schedule and the run's settings to the others,
// every process runs its own workers on threads, and process 0 gathers the whole result. The other
// processes run no command of their own: they serve runs until process 0 tells them to stop.
//
// Between processes, an activation or gradient is one MPI message, posted by the SEND (which does
// not wait for the transfer) and handed to the reader's mailbox, so the runtime's waits are those
// of one process. A thread waiting on a mailbox takes in messages itself; a progress thread per
// process takes in the rest (heartbeats, aborts, data sent ahead) and sees sends through. The
// gradient all-reduce and the optimizer barrier are executor/message_reduce.hpp's (bit for bit
// the one-process sums), and aborts, heartbeats and finished iterations are forwarded to every
// process. At the end of each schedule the processes agree on what happened (a kill, its
// detection, the iterations to drop) through collectives.
//
// Every MPI wait is polled, yielding and then sleeping between looks, so that a waiting thread
// leaves the cores to the workers, and gives up after the run's wait limit.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "core/units.hpp"
#include "executor/peers.hpp"
#include "executor/runtime.hpp"
#include "planner/language/schedule.hpp"

namespace recycle::executor::mpi {

/// How a process runs its own workers of a run: a backend's run with the run's peers
/// (executor::run_on_cpu, executor::cuda::run_on_cuda), the backend named by a number that the
/// command chose and every process's runner is given.
using Runner = std::function<RunResult(std::int32_t backend, const planner::Schedule& schedule,
                                       const RunConfig& config, Peers& peers)>;

/// The Runner of the cpu backend alone (executor::run_on_cpu; any backend number).
[[nodiscard]] RunResult run_on_cpu(std::int32_t backend, const planner::Schedule& schedule,
                                   const RunConfig& config, Peers& peers);

class Processes {
 public:
  /// Initializes MPI (with threads) when this process was started by an MPI launcher with more
  /// than one process; null otherwise (MPI is then not touched).
  [[nodiscard]] static std::unique_ptr<Processes> start(int* argc, char*** argv);
  ~Processes();  ///< process 0 tells the others to stop; every process finalizes MPI
  Processes(const Processes&) = delete;
  Processes& operator=(const Processes&) = delete;

  [[nodiscard]] int rank() const noexcept;
  [[nodiscard]] int size() const noexcept;
  /// This process among those on its machine.
  [[nodiscard]] Peers::Node node() const noexcept;

  /// Process 0: runs `schedule` over every process, each running its workers with its runner
  /// for `backend` (`runner` here, serve's in the others).
  [[nodiscard]] RunResult run(std::int32_t backend, const planner::Schedule& schedule,
                              const RunConfig& config, const Runner& runner);
  /// Process 0: run() on the cpu backend (mpi::run_on_cpu).
  [[nodiscard]] RunResult run_on_cpu(const planner::Schedule& schedule, const RunConfig& config) {
    return run(0, schedule, config, mpi::run_on_cpu);
  }
  /// What a message between two processes costs on the path runs take (an MPI message, the
  /// progress thread, the reader's mailbox): process 0 sends to process 1, which sends it back.
  struct Link {
    Nanos latency = 0;  ///< half the median round trip of a one-float message
    /// A 1 MiB message over half its median round trip less the latency; 0 when that is not
    /// above the latency (the clock could not tell them apart).
    BytesPerSecond bandwidth = 0;
  };
  static constexpr std::size_t kLinkProbeFloats = std::size_t{1} << 18;  ///< 1 MiB
  /// Process 0: times `repetitions` round trips (after one warm-up) of each size.
  [[nodiscard]] Link measure_link(std::int32_t repetitions);

  /// Every other process: runs what process 0 sends with `runner` until it says stop; the exit
  /// code.
  [[nodiscard]] int serve(const Runner& runner);

  struct Impl;

 private:
  explicit Processes(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// The processes of this program (set by main when started by an MPI launcher); null otherwise.
[[nodiscard]] Processes* current() noexcept;
void set_current(Processes* processes) noexcept;

}  // namespace recycle::executor::mpi
