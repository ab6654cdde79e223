// Keeping a thread on one cpu, and the processor time a thread has used: how the cpu backend's
// workers share cores when they outnumber them (RunConfig::pin_cpus) and how their operations are
// timed then (measure.hpp's TimingLoad).
#pragma once

#include <cstdint>

namespace recycle::executor {

/// Keeps the calling thread on cpu `cpu`; std::runtime_error naming it when the system refuses.
void pin_to(int cpu);

/// The processor time the calling thread has used, in ns (CLOCK_THREAD_CPUTIME_ID): it does not
/// advance while the thread waits or while another thread has its core.
[[nodiscard]] std::int64_t thread_cpu_ns();

}  // namespace recycle::executor
