// Running independent work on every core with results that do not depend on the threads.
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/error.hpp"

namespace recycle {

/// The cores this process may run on: its CPU affinity (what `taskset`, Slurm's
/// --cpus-per-task and container limits set), not every core of the machine.
inline std::size_t usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return static_cast<std::size_t>(count);
  }
  return std::max(1U, std::thread::hardware_concurrency());
}

/// The ids of those cores, ascending (empty when the affinity cannot be read).
inline std::vector<int> usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) out.push_back(cpu);
  }
  return out;
}

/// The InputError, naming `where`, of a run whose thread `started` + 1 of `wanted` the system
/// refused to start (a limit on the user's processes and threads, `ulimit -u`, or memory).
[[noreturn]] inline void refuse_thread(std::size_t started, std::size_t wanted,
                                       const std::system_error& e, const std::string& where) {
  throw InputError(where, "the system refused to start thread " + std::to_string(started + 1) +
                              " of the " + std::to_string(wanted) + " this run needs (" + e.what() +
                              "): run fewer workers, or raise the limit on threads (ulimit -u)");
}

/// Runs `make(i)` for i in [0, n) on up to `threads` threads (0: as many as usable_cores()) and
/// returns the results by index. If some calls throw, the exception of the lowest index is
/// rethrown once every thread has stopped. When the system refuses a thread (a thread limit), the
/// threads already started do the work: the results are the same.
template <typename Make>
auto parallel_map(std::size_t n, const Make& make, std::size_t threads = 0) {
  std::vector<std::invoke_result_t<const Make&, std::size_t>> out(n);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        out[i] = make(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  if (threads == 0) threads = usable_cores();
  threads = std::min(n, threads);
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // each thread takes the next index until none is left: fewer threads, same work
    }
  }
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return out;
}

}  // namespace recycle
