#include "executor/measure.hpp"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "executor/channels.hpp"
#include "executor/footprint.hpp"
#include "executor/stage_timer.hpp"

namespace recycle::executor {

TimingLoad run_load(std::int64_t workers, std::int64_t cores, std::int32_t in_flight,
                    std::vector<int> shared_cpus) {
  TimingLoad load;
  load.in_flight = std::max(1, in_flight);
  const std::int64_t computing = shared_cpus.empty() ? std::min(workers, cores) : workers;
  load.concurrent = static_cast<std::int32_t>(std::clamp<std::int64_t>(computing, 1, 1 << 20));
  load.pin_cpus = std::move(shared_cpus);
  return load;
}

MeasuredStage measure_stage(const StageShape& shape, std::int32_t repetitions,
                            const TimingLoad& load) {
  require_measurement_fits(shape, std::max(1, repetitions), kMaxCpuFlops, load.in_flight);
  openblas_set_num_threads(1);
  const std::vector<float> input = synthetic_input(shape, 1, 0, 0, 0);
  const std::vector<float> target = synthetic_target(shape, 1, 0, 0, 0);
  return time_stage<Chunk>([&] { return StageParams(shape, 0, 1); }, input, target,
                           &StageParams::loss, repetitions, load);
}

Nanos measure_handoff(std::int32_t repetitions) {
  using Clock = std::chrono::steady_clock;
  Abort abort(std::chrono::milliseconds(60'000));
  Mailbox<> to_echo(abort), to_main(abort);
  const std::int32_t rounds = std::max(1, repetitions) + 1;  // the first is a warm-up
  // The echo thread sends each message straight back: a round trip is two hand-offs.
  std::thread echo([&] {
    for (std::int32_t r = 0; r < rounds; ++r) {
      to_main.deliver({0, 0, 0, 0, r}, to_echo.take({0, 0, 0, 0, r}, "the hand-off probe"));
    }
  });
  std::vector<Nanos> trips;
  for (std::int32_t r = 0; r < rounds; ++r) {
    const auto t = Clock::now();
    to_echo.deliver({0, 0, 0, 0, r}, std::vector<float>(1, 1.0F));
    static_cast<void>(to_main.take({0, 0, 0, 0, r}, "the hand-off probe"));
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t);
    if (r > 0) trips.push_back(ns.count());
  }
  echo.join();
  return median_of(std::move(trips)) / 2;
}

Nanos measure_all_reduce(std::size_t floats, std::int32_t ranks, std::int32_t repetitions) {
  using Clock = std::chrono::steady_clock;
  const auto n = static_cast<std::size_t>(std::max(1, ranks));
  std::vector<std::vector<float>> data(n, std::vector<float>(floats, 1.0F));
  std::vector<std::vector<float>*> slots;
  for (std::vector<float>& d : data) slots.push_back(&d);
  std::vector<Nanos> times;
  for (std::int32_t r = 0; r <= std::max(1, repetitions); ++r) {
    const auto t = Clock::now();
    reduce_shard(slots, 0);
    gather_shards(slots, 0);
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t);
    if (r > 0) times.push_back(ns.count());  // the first is a warm-up
  }
  return median_of(std::move(times));
}

BytesPerSecond bus_bandwidth(Bytes bytes, std::int32_t ranks, Nanos time) {
  if (ranks <= 1 || bytes <= 0 || time <= 0) return 0;
  const double moved = 2.0 * (ranks - 1) / ranks * static_cast<double>(bytes);
  return moved / (static_cast<double>(time) * 1e-9);
}

profiles::StageProfile stage_profile(const StageShape& shape, const MeasuredStage& measured) {
  profiles::StageProfile s;
  s.forward = measured.cost.forward;
  s.backward_input = measured.cost.backward_input;
  s.backward_weight = measured.cost.backward_weight;
  s.optimizer = measured.optimizer;
  s.activation_bytes = static_cast<Bytes>(chunk_floats(shape)) * 4;
  s.output_bytes = static_cast<Bytes>(shape.rows()) * shape.width * 4;
  s.param_bytes = static_cast<Bytes>(parameter_floats(shape)) * 4;
  s.optimizer_state_bytes = 0;
  return s;
}

profiles::Profile measured_profile(const StageShape& shape, std::int32_t pp, std::int32_t cores,
                                   std::int32_t replicas, std::int32_t repetitions,
                                   const TimingLoad& load) {
  const std::int32_t ranks = std::max(2, replicas);
  require_all_reduce_fits(shape, ranks);  // before anything is timed
  const MeasuredStage stage = measure_stage(shape, repetitions, load);
  const Nanos handoff = measure_handoff(std::max(repetitions, 101));
  const profiles::StageProfile s = stage_profile(shape, stage);
  profiles::Profile p;
  p.name = "cpu backend: " + describe_layers(shape) + " per stage, micro-batches of " +
           std::to_string(shape.microbatch_size) +
           (shape.block == Block::kTransformer ? " sequences" : " rows");
  p.stages.assign(static_cast<std::size_t>(pp), s);
  p.loss = stage.loss;
  p.hardware.gpus_per_node = std::max(1, cores);
  p.hardware.intra_node_bandwidth = p.hardware.inter_node_bandwidth = kMovedBandwidth;
  p.hardware.intra_node_latency = p.hardware.inter_node_latency = handoff;
  p.hardware.memory_bytes = 0;
  const auto gradient_floats = static_cast<std::size_t>(s.param_bytes / 4);
  p.hardware.all_reduce_bus_bandwidth =
      bus_bandwidth(s.param_bytes, ranks, measure_all_reduce(gradient_floats, ranks, repetitions));
  return p;
}

}  // namespace recycle::executor
