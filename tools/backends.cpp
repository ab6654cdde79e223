#include "tools/backends.hpp"

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "executor/footprint.hpp"
#include "executor/measure.hpp"
#include "executor/placement.hpp"
#if RECYCLE_HAVE_CUDA
#include "executor/cuda/cuda_backend.hpp"
#include "executor/cuda/gpu_sharing.hpp"
#endif
#if RECYCLE_HAVE_MPI
#include "executor/mpi/processes.hpp"
#endif

namespace recycle::tools {

Backend parse_backend(const std::string& text) {
  if (text == "cpu") return Backend::kCpu;
  if (text == "cuda") {
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
  const bool cuda = backend == Backend::kCuda;
  executor::require_run_fits(schedule, shape, iterations,
                             cuda ? executor::kMaxGpuFlops : executor::kMaxCpuFlops,
                             cuda ? executor::kMaxGpuRunBytes : executor::kMaxRunBytes);
}

Sharing sharing_for(Backend backend, const planner::Schedule& schedule) {
  Sharing s;
  const std::size_t workers = schedule.workers.size();
  if (backend == Backend::kCuda) {
#if RECYCLE_HAVE_CUDA
    s.unit = "GPU";
    s.units = 1;
#if RECYCLE_HAVE_MPI
    if (const executor::mpi::Processes* processes = executor::mpi::current();
        processes != nullptr) {
      // Process 0's machine placed as a run places it; every other machine taken to be alike,
      // each node().size processes in rank order: a GPU per worker, or one GPU per machine.
      const executor::cuda::ProcessPlace here{0, processes->size(), processes->node()};
      s.shared = executor::cuda::place(schedule, here).shared;
      const auto workers = static_cast<std::size_t>(schedule.layout.workers());
      for (const planner::WorkerSchedule& w : schedule.workers) {
        const std::size_t flat = schedule.layout.index(w.id);
        const int machine =
            executor::process_of(flat, workers, processes->size()) / std::max(1, here.node.size);
        s.unit_of.push_back(static_cast<std::int32_t>(s.shared ? machine : flat));
      }
      return s;
    }
#endif
    const executor::GpuPlacement placement = executor::cuda::place(schedule);
    s.shared = placement.shared;
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

std::vector<double> measure_sharing(Backend backend, const executor::StageShape& shape,
                                    const Sharing& placed, std::int32_t rounds) {
  if (backend != Backend::kCuda || !placed.shared || placed.unit != "GPU") return {};
  std::map<std::int32_t, std::int32_t> on;  // workers by unit
  std::int32_t most = 1;
  for (const std::int32_t u : placed.unit_of) most = std::max(most, ++on[u]);
#if RECYCLE_HAVE_CUDA
  return executor::cuda::measure_gpu_sharing(shape, 0, std::min(most, 8), std::max(1, rounds));
#else
  static_cast<void>(shape);
  return {};
#endif
}

profiles::Profile per_stage(profiles::Profile measured, std::int32_t chunks) {
  for (profiles::StageProfile& s : measured.stages) {
    s.forward *= chunks;
    s.backward_input *= chunks;
    s.backward_weight *= chunks;
    s.optimizer *= chunks;
    s.activation_bytes *= chunks;
    s.param_bytes *= chunks;
    s.optimizer_state_bytes *= chunks;
  }
  return measured;
}

profiles::Profile measure_profile(Backend backend, const executor::StageShape& shape,
                                  std::int32_t pp, std::int32_t replicas, std::int32_t repetitions,
                                  std::int32_t in_flight, const Sharing& placed) {
  profiles::Profile p;
#if RECYCLE_HAVE_CUDA
  if (backend == Backend::kCuda)
    p = executor::cuda::measured_profile(shape, pp, replicas, repetitions, in_flight);
#endif
  if (backend == Backend::kCpu) {
    const auto cores = static_cast<std::int32_t>(usable_cores());
    const std::int64_t workers = placed.unit_of.empty()
                                     ? std::int64_t{pp} * std::max(1, replicas)
                                     : static_cast<std::int64_t>(placed.unit_of.size());
    p = executor::measured_profile(shape, pp, cores, replicas, repetitions,
                                   executor::run_load(workers, cores, in_flight, placed.pin_cpus));
  }
#if RECYCLE_HAVE_MPI
  if (executor::mpi::Processes* processes = executor::mpi::current(); processes != nullptr) {
    // Under mpirun each process is a node: its block of workers hand off as timed above, and a
    // message to another process takes the link timed here (and, from a GPU, the copies off it
    // and onto the reader's); the gradient all-reduce moves its shards over that link too.
    const std::int64_t layout_workers = std::int64_t{pp} * std::max(1, replicas);
    p.hardware.gpus_per_node =
        static_cast<std::int32_t>((layout_workers + processes->size() - 1) / processes->size());
    const std::int32_t rounds = std::max(repetitions, 101);
    const auto link = processes->measure_link(rounds);
    Nanos latency = link.latency;
    double seconds_per_byte = link.bandwidth > 0 ? 1.0 / link.bandwidth : 0.0;
#if RECYCLE_HAVE_CUDA
    if (backend == Backend::kCuda) {
      const std::size_t floats = executor::mpi::Processes::kLinkProbeFloats;
      const Nanos small = executor::cuda::time_host_staging(1, rounds);
      const Nanos large = executor::cuda::time_host_staging(floats, repetitions);
      latency += small;
      if (large > small)
        seconds_per_byte += static_cast<double>(large - small) * 1e-9 / (4.0 * floats);
    }
#endif
    p.hardware.inter_node_latency = latency;
    if (seconds_per_byte > 0) {
      p.hardware.inter_node_bandwidth = 1.0 / seconds_per_byte;
      p.hardware.all_reduce_bus_bandwidth =
          std::min(p.hardware.all_reduce_bus_bandwidth, p.hardware.inter_node_bandwidth);
    }
  }
#endif
  return p;
}

executor::RunResult run_with_peers(std::int32_t backend, const planner::Schedule& schedule,
                                   const executor::RunConfig& config, executor::Peers& peers) {
#if RECYCLE_HAVE_CUDA
  if (backend == static_cast<std::int32_t>(Backend::kCuda))
    return executor::cuda::run_on_cuda(schedule, config, &peers);
#endif
  static_cast<void>(backend);
  return executor::run_on_cpu(schedule, config, &peers);
}

executor::RunResult run_on(Backend backend, const planner::Schedule& schedule,
                           const executor::RunConfig& config) {
#if RECYCLE_HAVE_MPI
  if (executor::mpi::Processes* processes = executor::mpi::current(); processes != nullptr)
    return processes->run(static_cast<std::int32_t>(backend), schedule, config, run_with_peers);
#endif
#if RECYCLE_HAVE_CUDA
  if (backend == Backend::kCuda) return executor::cuda::run_on_cuda(schedule, config);
#endif
  static_cast<void>(backend);
  return executor::run_on_cpu(schedule, config);
}

}  // namespace recycle::tools
