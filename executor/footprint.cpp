#include "executor/footprint.hpp"

#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"
#include "planner/validator.hpp"

namespace recycle::executor {

namespace {

/// What one worker running one stage and holding `held` micro-batches needs, in bytes: the
/// stage's parameters, gradients and snapshot (for a kill's restore), and per held micro-batch
/// each layer's input, output and dz and its message out and in.
double worker_bytes(const StageShape& shape, double held) {
  const double width = shape.width;
  const double layers = shape.layers;
  const double rows = shape.microbatch_size;
  const double stage_floats = layers * (width * width + width);
  const double chunk_floats = 3 * layers * rows * width + 2 * rows * width;
  return (3 * stage_floats + held * chunk_floats) * sizeof(float);
}

void require_bytes(double bytes, const StageShape& shape, std::int64_t workers) {
  if (bytes <= static_cast<double>(kMaxRunBytes)) return;
  throw InputError("--width x --layers-per-stage x --microbatch-size",
                   fmt::format("width {}, {} layers a stage and {} rows a micro-batch on {} "
                               "worker{} need about {:.3g} GiB (parameters, gradients, snapshots "
                               "and held activations); the limit is {} GiB",
                               shape.width, shape.layers, shape.microbatch_size, workers,
                               workers == 1 ? "" : "s", bytes / (1 << 30), kMaxRunBytes >> 30));
}

void require_flops(double flops, const std::string& flags, const std::string& what) {
  if (flops <= kMaxRunFlops) return;
  throw InputError(flags, fmt::format("{} takes about {:.3g} floating-point operations; the limit "
                                      "is {:.3g}",
                                      what, flops, kMaxRunFlops));
}

}  // namespace

double chunk_flops(const StageShape& shape) noexcept {
  return 3 * 2 * static_cast<double>(shape.microbatch_size) * shape.width * shape.width *
         shape.layers;
}

std::int64_t run_bytes(const planner::Schedule& schedule, const StageShape& shape) {
  double bytes = 0;
  for (const std::int32_t held : planner::peak_inflight_chunks(schedule))
    bytes += worker_bytes(shape, held);
  return bytes >= 9e18 ? std::numeric_limits<std::int64_t>::max()
                       : static_cast<std::int64_t>(bytes);
}

void require_run_fits(const planner::Schedule& schedule, const StageShape& shape,
                      std::int32_t iterations) {
  const auto workers = std::ssize(schedule.workers);
  if (workers > kMaxWorkers) {
    throw InputError("--dp x --pp", fmt::format("{} live workers, each two threads; the executor "
                                                "runs at most {}",
                                                workers, kMaxWorkers));
  }
  // Per iteration and micro-batch of every pipeline: whether it was processed and its loss.
  const double records =
      static_cast<double>(iterations) * schedule.layout.dp * schedule.layout.microbatches * 16;
  require_bytes(static_cast<double>(run_bytes(schedule, shape)) + records, shape, workers);
  const planner::Layout& l = schedule.layout;
  require_flops(static_cast<double>(iterations) * l.dp * l.pp * l.microbatches * chunk_flops(shape),
                "--iterations x --width x --layers-per-stage x --microbatch-size",
                fmt::format("{} iterations of {} micro-batches on dp {} x pp {}", iterations,
                            l.microbatches, l.dp, l.pp));
}

void require_measurement_fits(const StageShape& shape, std::int32_t repetitions) {
  require_bytes(worker_bytes(shape, 1), shape, 1);
  require_flops((repetitions + 1.0) * chunk_flops(shape),
                "--repetitions x --width x --layers-per-stage x --microbatch-size",
                fmt::format("timing F, I and W {} times", repetitions + 1));
}

}  // namespace recycle::executor
