// Timing the workload's operations on this machine: what the simulator is given to predict a run.
// `recycle profile measure` writes them as a recycle.profile/1; `recycle validate` measures them
// before every run.
#pragma once

#include <cstdint>
#include <vector>

#include "core/units.hpp"
#include "executor/stage_math.hpp"
#include "planner/language/costs.hpp"
#include "profiles/profile.hpp"

namespace recycle::executor {

struct MeasuredStage {
  planner::StageCost cost;  ///< F, I, W of one micro-batch
  Nanos optimizer = 0;      ///< one optimizer step of the stage
  Nanos loss = 0;           ///< the loss of one micro-batch and its gradient (the last stage's)
};

/// Under which load a stage's operations are timed: as in the run they predict.
struct TimingLoad {
  /// Threads computing at once, the timed one included: the others run the same operations on
  /// copies of the stage (the load of a run where that many workers compute at once and share the
  /// memory system and its caches; an operation timed alone on an idle machine is 2-4 % faster
  /// than in such a run, docs/validation.md).
  std::int32_t concurrent = 1;
  std::int32_t in_flight = 1;  ///< micro-batches each thread holds at once
  /// Empty: the threads run where the system puts them and each operation is timed by the wall
  /// clock. Else thread k (0, the timed one) runs only on cpu pin_cpus[k % size], as the run's
  /// worker k does (RunConfig::pin_cpus), and each operation is timed by the processor time its
  /// thread used (thread_cpu_ns): the work sim/shared_cores.hpp shares a core's time among,
  /// including what the core's other threads cost it (caches refilled after each switch).
  std::vector<int> pin_cpus;
};

/// The load of a run of `workers` live workers on `cores` cores: as many compute at once as there
/// are workers or cores, whichever is fewer; workers that outnumber the cores share them, kept on
/// `shared_cpus` (the run's RunConfig::pin_cpus; empty when they do not share), all computing at
/// once.
[[nodiscard]] TimingLoad run_load(std::int64_t workers, std::int64_t cores, std::int32_t in_flight,
                                  std::vector<int> shared_cpus = {});

/// Times F, I, W and the optimizer step of one stage of `shape` with one BLAS thread a thread: the
/// median of `repetitions` runs after a warm-up (stage_timer.hpp's time_stage), under `load`.
[[nodiscard]] MeasuredStage measure_stage(const StageShape& shape, std::int32_t repetitions,
                                          const TimingLoad& load = {});

/// One-way time of handing a message from one worker thread to another through a mailbox (the
/// cpu backend's SEND/RECV: the data is moved, not copied, so the time does not grow with its
/// size): half the median of `repetitions` round trips between two threads, after a warm-up.
[[nodiscard]] Nanos measure_handoff(std::int32_t repetitions);

/// One rank's share of an all-reduce of `floats` fp32 values over `ranks` ranks (the cpu
/// backend's AllReduceGroup: reduce_shard, then gather_shards), timed on the calling thread: the
/// median of `repetitions` runs after a warm-up. The waits between the phases are not included
/// (a profile charges them as the link's latency).
[[nodiscard]] Nanos measure_all_reduce(std::size_t floats, std::int32_t ranks,
                                       std::int32_t repetitions);

/// The bus bandwidth (as nccl-tests defines it: 2 (n - 1) / n x bytes over the time) of an
/// all-reduce of `bytes` over `ranks` ranks that takes `time`; 0 (no charge per byte) when there
/// is nothing to move.
[[nodiscard]] BytesPerSecond bus_bandwidth(Bytes bytes, std::int32_t ranks, Nanos time);

/// A stage of `shape` as a profile states it: the measured F, I, W and step, and the bytes of what
/// a chunk keeps from F until W, of the message between stages and of the weights (fp32, plain
/// SGD: no optimizer state).
[[nodiscard]] profiles::StageProfile stage_profile(const StageShape& shape,
                                                   const MeasuredStage& measured);

/// The bandwidth a profile of the cpu backend states: messages are moved between threads, never
/// copied, so no time is charged per byte (the profile format needs a finite bandwidth).
inline constexpr BytesPerSecond kMovedBandwidth = 1e18;

/// The recycle.profile/1 of the cpu backend's workload split into `pp` stages of `shape` (every
/// stage the same; the last stage's loss, which a run times inside its I, is not in it): the
/// F, I, W and optimizer step measured under `load` (run_load), the bytes of the fp32
/// activations, messages and weights, and a "node" of `cores` workers linked by the measured
/// hand-off latency, whose gradient all-reduces run at the bus bandwidth measured over `replicas`
/// ranks (at least 2).
[[nodiscard]] profiles::Profile measured_profile(const StageShape& shape, std::int32_t pp,
                                                 std::int32_t cores, std::int32_t replicas,
                                                 std::int32_t repetitions, const TimingLoad& load);

}  // namespace recycle::executor
