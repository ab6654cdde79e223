// The executor's backends as the commands choose them (--backend cpu|cuda): the one place that
// knows whether this build has the cuda backend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "executor/peers.hpp"
#include "executor/runtime.hpp"
#include "profiles/profile.hpp"

namespace recycle::tools {

enum class Backend : std::uint8_t { kCpu, kCuda };

/// "cpu" or "cuda"; InputError naming --backend for anything else, and for cuda in a build
/// without it.
[[nodiscard]] Backend parse_backend(const std::string& text);

/// How a run's live workers share the units they compute on: cores for the cpu backend, the GPU
/// for the cuda backend's workers on a one-GPU machine.
struct Sharing {
  bool shared = false;  ///< more live workers than units
  std::size_t units = 1;
  std::string unit;  ///< "cores", "GPU"
  /// Worker i of the run's first schedule computes on unit unit_of[i].
  std::vector<std::int32_t> unit_of;
  std::vector<int> pin_cpus;  ///< the cpu backend's RunConfig::pin_cpus when shared
};

/// Refuses a run of `schedule` the backend would refuse (executor::require_run_fits with the
/// backend's arithmetic and memory limits), before anything is timed.
void require_run_fits(Backend backend, const planner::Schedule& schedule,
                      const executor::StageShape& shape, std::int32_t iterations);

/// Where `schedule`'s live workers go (refused, InputError, when the backend cannot place them).
[[nodiscard]] Sharing sharing_for(Backend backend, const planner::Schedule& schedule);

/// The backend's measured profile (executor::measured_profile, executor::cuda::measured_profile),
/// its operations timed with `in_flight` micro-batches held at once, under the load of a run
/// placed as `placed` says (sharing_for; default: pp x replicas workers, placed where the system
/// puts them). For the cpu backend's workers sharing cores: each thread kept where its worker will
/// be, and timed by its processor time (executor::TimingLoad).
[[nodiscard]] profiles::Profile measure_profile(Backend backend, const executor::StageShape& shape,
                                                std::int32_t pp, std::int32_t replicas,
                                                std::int32_t repetitions,
                                                std::int32_t in_flight = 1,
                                                const Sharing& placed = {});

/// How much more work one GPU does with n of a run's workers computing on it at once than with one
/// (executor::cuda::measure_gpu_sharing, n = 1..min(most workers on one unit, 8); the last entry
/// holds past it): the `throughput` of sim/shared_cores.hpp. Empty unless `placed` puts workers
/// of the cuda backend on a shared GPU.
[[nodiscard]] std::vector<double> measure_sharing(Backend backend,
                                                  const executor::StageShape& shape,
                                                  const Sharing& placed, std::int32_t rounds);

/// The profile of stages that each run `chunks` model chunks of the measured shape (interleaved
/// and V-shaped schedules: every chunk of `measured`'s size): each stage's times, activations,
/// weights and optimizer state `chunks` times one chunk's, its messages one chunk's, as
/// planner::CostModel::from_profile splits a stage over its chunks.
[[nodiscard]] profiles::Profile per_stage(profiles::Profile measured, std::int32_t chunks);

/// Under mpirun: runs this process's workers of `schedule` on the backend numbered `backend`
/// (a Backend), with the run's peers (executor::mpi::Runner; every process's).
[[nodiscard]] executor::RunResult run_with_peers(std::int32_t backend,
                                                 const planner::Schedule& schedule,
                                                 const executor::RunConfig& config,
                                                 executor::Peers& peers);

/// Runs `schedule` on the backend: under mpirun, over every process (run_with_peers in each).
[[nodiscard]] executor::RunResult run_on(Backend backend, const planner::Schedule& schedule,
                                         const executor::RunConfig& config);

}  // namespace recycle::tools
