// Workers that share processors: the iteration times of a schedule whose workers are kept on
// given cores, several to a core, as the cpu backend keeps its threads when live workers
// outnumber the cores the process may use (executor/runtime.hpp RunConfig::pin_cpus,
// docs/validation.md).
//
// The model is processor sharing within each core: at every instant the n actions running on
// a core (each ready by the schedule's rules, the same ExecutionGraph edges every other walker
// uses) each progress at 1/n of their own speed, as an operating system's scheduler shares one
// core fairly among its runnable threads. A worker waiting for data takes no processor (the
// executor's waits block). A stage's gradient all-reduce is work on the core of every worker
// that takes part (each of its REDUCE_GRADs), its whole duration on each: the cpu backend's
// ranks each do an equal share of the sum on their own threads (executor/channels.hpp); it ends
// when the last share ends. Other nodes of no worker (barriers, transfers) take no core. With a
// core for every worker it is the graph's longest-path timing, iteration after iteration.
//
// A GPU shared by workers' streams is such a unit whose aggregate speed grows with the actions
// running on it: kernels of one stream fill the SMs another leaves idle (a GEMM's last wave, a
// small kernel, a gap between launches). `throughput[n - 1]` is how much more work per second
// the unit does with n actions running than with one (measured on the GPU by
// executor::cuda::measure_gpu_sharing; 1 for n = 1), so each of the n progresses at
// throughput[n - 1] / n; past the end of the list its last entry holds. Empty: 1 for every n,
// plain processor sharing, as for cores.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/units.hpp"
#include "planner/language/execution_graph.hpp"
#include "planner/language/schedule.hpp"
#include "planner/timing/cost_model.hpp"

namespace recycle::sim {

/// When each of `iterations` consecutive iterations of `schedule` (lowered, or compute-only and
/// lowered here) ends: its last action's end. `core_of[w]` is the core of schedule.workers[w]
/// (any integers; equal means shared); `throughput` as above (positive entries). nullopt when the
/// schedule deadlocks. Needs one core per worker and iterations >= 1.
[[nodiscard]] std::optional<std::vector<Nanos>> shared_core_iteration_ends(
    const planner::Schedule& schedule, const planner::CostModel& model,
    const planner::GraphOptions& options, const std::vector<std::int32_t>& core_of,
    std::int32_t iterations, const std::vector<double>& throughput = {});

}  // namespace recycle::sim
