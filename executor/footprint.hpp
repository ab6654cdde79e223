// What a run of the executor needs, estimated before it starts: threads and memory. Runs past the
// limits are refused with the estimate (docs/cli.md, "Limits and what happens past them").
#pragma once

#include <cstdint>

#include "executor/stage_math.hpp"
#include "planner/language/schedule.hpp"

namespace recycle::executor {

/// Most live workers a run takes: each is two threads (its own and its heartbeat's).
inline constexpr std::int64_t kMaxWorkers = 1'024;
/// Most memory a run may need, in bytes: 16 GiB of the host's on the cpu backend, and for timing
/// one stage or an all-reduce.
inline constexpr std::int64_t kMaxRunBytes = std::int64_t{16} << 30;
/// The same on the cuda backend, whose runs keep their tensors on the GPUs: 1 TiB, past any node's
/// GPUs together; each GPU's own share is checked against its free memory before a run starts
/// (executor/cuda/cuda_backend.cpp).
inline constexpr std::int64_t kMaxGpuRunBytes = std::int64_t{1} << 40;
/// Most arithmetic a run, or the timing of one stage, may do, in floating-point operations: a few
/// minutes of the cores of a small machine on the cpu backend (1e13), of one GPU in fp32 without
/// tensor cores on the cuda backend (1e16: 150 s at 67 TFLOP/s, an H100's fp32 peak).
inline constexpr double kMaxCpuFlops = 1e13;
inline constexpr double kMaxGpuFlops = 1e16;

/// An upper bound on the memory a run of `schedule` takes: on every live worker, its stage's
/// parameters, gradients and snapshot (for a kill's restore), and the activations of as many
/// micro-batches as the worker holds at once (what F keeps and I adds until W) and their
/// messages, and the temporaries of one I (transient_floats).
[[nodiscard]] std::int64_t run_bytes(const planner::Schedule& schedule, const StageShape& shape);

/// Most rows of a micro-batch's activation (samples, or samples x sequence for transformer blocks).
inline constexpr std::int64_t kMaxRows = std::int64_t{1} << 24;

/// Refuses a shape the workload cannot run (InputError naming the flag): transformer heads that
/// do not divide the width, more than kMaxRows rows a micro-batch. The two checks below begin
/// with it.
void require_shape(const StageShape& shape);

/// Refuses a run of more than kMaxWorkers workers (InputError naming --dp x --pp), of more than
/// `max_bytes` (the backend's kMaxRunBytes or kMaxGpuRunBytes; naming the workload's flags:
/// run_bytes plus the per-iteration records) or of more than `max_flops` (the backend's
/// kMaxCpuFlops or kMaxGpuFlops; naming --iterations too), with the estimate and the limit. Each
/// backend calls it before anything runs.
void require_run_fits(const planner::Schedule& schedule, const StageShape& shape,
                      std::int32_t iterations, double max_flops,
                      std::int64_t max_bytes = kMaxRunBytes);
/// The timed rounds of a measurement (stage_timer.hpp's time_stage) of at least `repetitions` of
/// each operation, `in_flight` micro-batches a round: ceil(repetitions / in_flight), after one
/// warm-up round.
[[nodiscard]] constexpr std::int32_t timed_rounds(std::int32_t repetitions,
                                                  std::int32_t in_flight) noexcept {
  const std::int32_t per_round = in_flight < 1 ? 1 : in_flight;
  return ((repetitions < 1 ? 1 : repetitions) + per_round - 1) / per_round;
}
/// The same for timing one stage's operations: (timed_rounds + 1) x `in_flight` micro-batches'
/// F, I and W, `in_flight` of them held at once (measure_stage).
void require_measurement_fits(const StageShape& shape, std::int32_t repetitions, double max_flops,
                              std::int32_t in_flight = 1);
/// Refuses timing an all-reduce of one stage's gradients over `ranks` replicas (one vector each)
/// past kMaxRunBytes (InputError naming --dp).
void require_all_reduce_fits(const StageShape& shape, std::int32_t ranks);

}  // namespace recycle::executor
