// The configuration search (`recycle configure`): how to run a model on a number of GPUs with a
// global batch, fastest without failures. It enumerates tensor, pipeline and data parallelism,
// the micro-batch size, recomputation, sequence parallelism, the distributed optimizer, every
// fault-free schedule and the interleaved schedule's chunk count; each configuration is a job
// (profiles/job.hpp) timed exactly as `recycle simulate --job` times it (planner::pipeline_period,
// the one definition), so every row it ranks is a job file that command accepts and times alike.
//
// Pruning never drops a configuration that could rank: each is first given a lower bound on its
// iteration time that needs no schedule (its busiest stage's compute for m micro-batches, plus
// that stage's gradient all-reduce and optimizer step, which a synchronous schedule runs between
// one iteration's last W and the next's first F); configurations are timed in the order of their
// bounds, and the search stops once the next bound exceeds the K-th best time found. A
// configuration that does not fit one micro-batch next to its state is refused before timing;
// one whose model is a configuration's already timed is folded into that one's row
// (docs/configure.md).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "profiles/flops.hpp"
#include "profiles/gpu_spec.hpp"
#include "profiles/model_spec.hpp"
#include "profiles/synthesizer.hpp"

namespace recycle::planner {

struct ConfigureSpace {
  profiles::ModelSpec model;
  profiles::GpuSpec gpu;
  std::int64_t gpus = 0;
  std::int64_t global_batch = 0;
  /// The schedules tried; empty: every fault-free generator but gpipe (configure_schedules).
  std::vector<std::string> schedules;
  std::int32_t max_tp = 0;  ///< 0: the GPUs of a node
  std::vector<profiles::Recompute> recompute = {
      profiles::Recompute::kNone, profiles::Recompute::kSelective, profiles::Recompute::kFull};
  profiles::DType dtype = profiles::DType::kBf16;       ///< every configuration's data type
  bool flash_attention = true;                          ///< and attention kernel
  std::vector<bool> sequence_parallel = {false, true};  ///< tried where tp > 1 (else off)
  /// The optimizer's state: replicated, sharded (the distributed optimizer, one copy of each
  /// shard), or sharded with a replica of each shard; the sharded ones tried where dp > 1.
  enum class Optimizer : std::uint8_t { kReplicated, kSharded, kShardedReplica };
  std::vector<Optimizer> optimizer = {Optimizer::kReplicated, Optimizer::kSharded};
  std::int64_t max_microbatch_size = 16;
  std::int32_t max_interleave = 8;  ///< chunks a worker the interleaved schedule is tried with
  std::int32_t top = 10;            ///< rows ranked
  /// false: time every configuration (the brute force the pruning is tested against).
  bool prune = true;
  /// Called with the fraction of the space done (0..1); may be empty.
  std::function<void(double)> progress;
};

/// One ranked configuration.
struct Configuration {
  profiles::ParallelConfig parallel;
  std::string schedule;
  Nanos iteration = 0;
  Nanos lower_bound = 0;     ///< the bound it was ordered by
  double samples_per_s = 0;  ///< global batch / iteration
  double mfu = 0;            ///< profiles::Synthesis::mfu
  Bytes peak_per_gpu = 0;    ///< its busiest worker's peak over its tp GPUs
  Bytes memory_per_gpu = 0;  ///< the GPU's memory
  /// Configurations of the same model (model_key) folded into this row: they time and hold
  /// alike (selective recomputation under flash attention is none's model, for one).
  std::vector<profiles::ParallelConfig> alike;
};

/// Why configurations were not ranked, with how many.
struct Refusal {
  std::string reason;
  std::int64_t count = 0;
};

struct ConfigureResult {
  std::vector<Configuration> ranked;  ///< fastest first; ties by the order enumerated
  std::int64_t configurations = 0;    ///< in the space
  std::int64_t timed = 0;             ///< simulated
  std::int64_t pruned = 0;            ///< not timed: their bound could not beat the top K
  std::int64_t folded = 0;  ///< not ranked apart: the same model as a configuration ranked before
  std::vector<Refusal> refused;  ///< by reason, largest first
  /// Among configurations refused for memory, the smallest shortfall per GPU (0: none refused).
  Bytes least_shortfall_per_gpu = 0;
  /// The data-parallel degrees of the tp x pp x dp splits the model takes (tp dividing its heads,
  /// key/value heads and MLP width, pp at most its layers), whether or not they divide the batch.
  std::vector<std::int64_t> dp_choices;
};

struct JobModel;

/// Everything a configuration's times and memory depend on: its schedule, layout and cost model
/// (the network follows from the hardware and tp). Two configurations of one model and GPU with
/// one key time alike, and so do their re-cuts to other depths (equal per-stage costs and bytes
/// at one depth are equal per-layer ones): selective recomputation under flash attention stores
/// and recomputes what none does, for one.
[[nodiscard]] std::string model_key(const JobModel& model, const std::string& schedule);

/// The schedules `configure` tries by default.
[[nodiscard]] const std::vector<std::string>& configure_schedules();

/// Searches `space`. InputError naming the flag when the space is empty or ill-formed (no GPUs, a
/// global batch of 0, an unknown schedule); a space where nothing fits is an answer with no rows
/// (the caller says what would fit from `refused`).
[[nodiscard]] ConfigureResult configure(const ConfigureSpace& space);

}  // namespace recycle::planner
