#include "executor/cpu_pin.hpp"

#include <pthread.h>
#include <sched.h>

#include <ctime>
#include <stdexcept>
#include <string>

namespace recycle::executor {

void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
    throw std::runtime_error("cannot keep a worker on cpu " + std::to_string(cpu));
}

std::int64_t thread_cpu_ns() {
  timespec t{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0)
    throw std::runtime_error("the thread's processor time cannot be read");
  return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

}  // namespace recycle::executor
