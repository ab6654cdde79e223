#include "executor/footprint.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"
#include "planner/language/validator.hpp"

namespace recycle::executor {

namespace {

/// What one worker running one stage and holding `held` micro-batches needs, in bytes: the
/// stage's parameters, gradients and snapshot (for a kill's restore), per held micro-batch what
/// it keeps from F until W and its message out and in, and the temporaries of the one I running.
double worker_bytes(const StageShape& shape, double held) {
  const auto stage_floats = static_cast<double>(parameter_floats(shape));
  const double message_floats = static_cast<double>(shape.rows()) * shape.width;
  const double held_floats = static_cast<double>(chunk_floats(shape)) + 2 * message_floats;
  return (3 * stage_floats + held * held_floats + static_cast<double>(transient_floats(shape))) *
         sizeof(float);
}

/// The flags that set the workload's size, for an error's name.
std::string shape_flags(const StageShape& shape) {
  return shape.block == Block::kTransformer
             ? "--width x --layers-per-stage x --microbatch-size x --sequence"
             : "--width x --layers-per-stage x --microbatch-size";
}

void require_bytes(double bytes, const StageShape& shape, std::int64_t workers,
                   std::int64_t max_bytes = kMaxRunBytes) {
  if (bytes <= static_cast<double>(max_bytes)) return;
  throw InputError(shape_flags(shape),
                   fmt::format("{} a stage and micro-batches of {} rows on {} worker{} need about "
                               "{:.3g} GiB (parameters, gradients, snapshots and held "
                               "activations); the limit is {} GiB",
                               describe_layers(shape), shape.rows(), workers,
                               workers == 1 ? "" : "s", bytes / (1 << 30), max_bytes >> 30));
}

void require_flops(double flops, double max_flops, const std::string& flags,
                   const std::string& what) {
  if (flops <= max_flops) return;
  throw InputError(flags, fmt::format("{} takes about {:.3g} floating-point operations; the limit "
                                      "is {:.3g}",
                                      what, flops, max_flops));
}

}  // namespace

std::int64_t run_bytes(const planner::Schedule& schedule, const StageShape& shape) {
  double bytes = 0;
  for (const std::int32_t held : planner::peak_inflight_chunks(schedule))
    bytes += worker_bytes(shape, held);
  return bytes >= 9e18 ? std::numeric_limits<std::int64_t>::max()
                       : static_cast<std::int64_t>(bytes);
}

void require_shape(const StageShape& shape) {
  if (shape.block != Block::kTransformer) return;
  if (shape.heads <= 0 || (shape.head_dim == 0 && shape.width % shape.heads != 0)) {
    throw InputError("--heads",
                     fmt::format("{} heads do not divide --width {}", shape.heads, shape.width));
  }
  const transformer::Dims d = transformer_dims(shape);
  if (d.kv_heads <= 0 || d.heads % d.kv_heads != 0) {
    throw InputError("--kv-heads", fmt::format("{} key/value heads do not divide the {} heads",
                                               d.kv_heads, d.heads));
  }
  if (d.style.rotary && d.head_dim % 2 != 0) {
    throw InputError("--heads", fmt::format("the rotary embedding pairs a head's features; heads "
                                            "of {} features are odd",
                                            d.head_dim));
  }
  const std::int64_t rows = std::int64_t{shape.microbatch_size} * shape.sequence;
  if (rows > kMaxRows) {
    throw InputError(
        "--microbatch-size x --sequence",
        fmt::format("{} tokens a micro-batch; the executor runs at most {}", rows, kMaxRows));
  }
}

void require_run_fits(const planner::Schedule& schedule, const StageShape& shape,
                      std::int32_t iterations, double max_flops, std::int64_t max_bytes) {
  require_shape(shape);
  const auto workers = std::ssize(schedule.workers);
  if (workers > kMaxWorkers) {
    throw InputError("--dp x --pp", fmt::format("{} live workers, each two threads; the executor "
                                                "runs at most {}",
                                                workers, kMaxWorkers));
  }
  // Per iteration and micro-batch of every pipeline: whether it was processed and its loss.
  const double records =
      static_cast<double>(iterations) * schedule.layout.dp * schedule.layout.microbatches * 16;
  require_bytes(static_cast<double>(run_bytes(schedule, shape)) + records, shape, workers,
                max_bytes);
  const planner::Layout& l = schedule.layout;
  require_flops(static_cast<double>(iterations) * l.dp * l.pp * l.microbatches * chunk_flops(shape),
                max_flops, "--iterations x " + shape_flags(shape),
                fmt::format("{} iterations of {} micro-batches on dp {} x pp {}", iterations,
                            l.microbatches, l.dp, l.pp));
}

void require_measurement_fits(const StageShape& shape, std::int32_t repetitions, double max_flops,
                              std::int32_t in_flight) {
  require_shape(shape);
  const std::int32_t held = std::max(1, in_flight);
  require_bytes(worker_bytes(shape, held), shape, 1);
  const std::int64_t runs = (std::int64_t{timed_rounds(repetitions, held)} + 1) * held;
  require_flops(static_cast<double>(runs) * chunk_flops(shape), max_flops,
                "--repetitions x " + shape_flags(shape),
                fmt::format("timing F, I and W {} times", runs));
}

void require_all_reduce_fits(const StageShape& shape, std::int32_t ranks) {
  const double bytes =
      static_cast<double>(ranks) * static_cast<double>(parameter_floats(shape)) * sizeof(float);
  if (bytes <= static_cast<double>(kMaxRunBytes)) return;
  throw InputError(
      "--dp", fmt::format("timing the all-reduce of {} replicas of {} takes about "
                          "{:.3g} GiB; the limit is {} GiB",
                          ranks, describe_layers(shape), bytes / (1 << 30), kMaxRunBytes >> 30));
}

}  // namespace recycle::executor
