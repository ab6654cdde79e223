#include "tools/backends.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "executor/footprint.hpp"
#include "executor/measure.hpp"
#include "executor/placement.hpp"
#if RECYCLE_HAVE_CUDA
#include "executor/cuda/cuda_backend.hpp"
#endif
#if RECYCLE_HAVE_MPI
#include "executor/mpi/processes.hpp"
#endif

namespace recycle::tools {

Backend parse_backend(const std::string& text) {
  if (text == "cpu") return Backend::kCpu;
  if (text == "cuda") {
#if RECYCLE_HAVE_MPI
    if (executor::mpi::current() != nullptr) {
      throw InputError("--backend",
                       "'cuda' under mpirun: the cuda backend drives every GPU of a node from one "
                       "process; run it without mpirun, or use --backend cpu");
    }
#endif
#if RECYCLE_HAVE_CUDA
    return Backend::kCuda;
#else
    throw InputError("--backend",
                     "'cuda': this build has no cuda backend (nvcc, cuBLAS or NCCL "
                     "was not found when it was configured)");
#endif
  }
  throw InputError("--backend", "'" + text + "': expected cpu or cuda");
}

void require_run_fits(Backend backend, const planner::Schedule& schedule,
                      const executor::StageShape& shape, std::int32_t iterations) {
  executor::require_run_fits(
      schedule, shape, iterations,
      backend == Backend::kCuda ? executor::kMaxGpuFlops : executor::kMaxCpuFlops);
}

Sharing sharing_for(Backend backend, const planner::Schedule& schedule) {
  Sharing s;
  const std::size_t workers = schedule.workers.size();
  if (backend == Backend::kCuda) {
#if RECYCLE_HAVE_CUDA
    const executor::GpuPlacement placement = executor::cuda::place(schedule);
    s.shared = placement.shared;
    s.unit = "GPU";
    s.units = 1;
    for (const int d : placement.device) s.unit_of.push_back(d);
    return s;
#endif
  }
  executor::require_cpu_placement(workers);
  s.unit = "cores";
  s.units = usable_cores();
  s.shared = workers > s.units;
  for (std::size_t i = 0; i < workers; ++i)
    s.unit_of.push_back(static_cast<std::int32_t>(i % s.units));
  if (s.shared) s.pin_cpus = usable_cpus();
  return s;
}

profiles::Profile measure_profile(Backend backend, const executor::StageShape& shape,
                                  std::int32_t pp, std::int32_t replicas, std::int32_t repetitions,
                                  std::int32_t in_flight, const Sharing& placed) {
#if RECYCLE_HAVE_CUDA
  if (backend == Backend::kCuda)
    return executor::cuda::measured_profile(shape, pp, replicas, repetitions, in_flight);
#endif
  static_cast<void>(backend);
  const auto cores = static_cast<std::int32_t>(usable_cores());
  const std::int64_t workers = placed.unit_of.empty()
                                   ? std::int64_t{pp} * std::max(1, replicas)
                                   : static_cast<std::int64_t>(placed.unit_of.size());
  profiles::Profile p =
      executor::measured_profile(shape, pp, cores, replicas, repetitions,
                                 executor::run_load(workers, cores, in_flight, placed.pin_cpus));
#if RECYCLE_HAVE_MPI
  if (executor::mpi::Processes* processes = executor::mpi::current(); processes != nullptr) {
    // Under mpirun each process is a node: its block of workers hand off in memory (the
    // hand-off timed above), and a message to another process takes the link timed here; the
    // gradient all-reduce moves its shards over that link too.
    const std::int64_t layout_workers = std::int64_t{pp} * std::max(1, replicas);
    p.hardware.gpus_per_node =
        static_cast<std::int32_t>((layout_workers + processes->size() - 1) / processes->size());
    const auto link = processes->measure_link(std::max(repetitions, 101));
    p.hardware.inter_node_latency = link.latency;
    if (link.bandwidth > 0) {
      p.hardware.inter_node_bandwidth = link.bandwidth;
      p.hardware.all_reduce_bus_bandwidth =
          std::min(p.hardware.all_reduce_bus_bandwidth, link.bandwidth);
    }
  }
#endif
  return p;
}

executor::RunResult run_on(Backend backend, const planner::Schedule& schedule,
                           const executor::RunConfig& config) {
#if RECYCLE_HAVE_CUDA
  if (backend == Backend::kCuda) return executor::cuda::run_on_cuda(schedule, config);
#endif
  static_cast<void>(backend);
#if RECYCLE_HAVE_MPI
  if (executor::mpi::Processes* processes = executor::mpi::current(); processes != nullptr)
    return processes->run_on_cpu(schedule, config);
#endif
  return executor::run_on_cpu(schedule, config);
}

}  // namespace recycle::tools
