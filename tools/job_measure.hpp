// `recycle profile measure --job FILE`: the job's own transformer layer timed on a backend, the
// profile of the job's pipeline built from it, and the row-by-row comparison with what the
// synthesizer predicts for the same layer (docs/validation.md, "Measuring a job's layer").
#pragma once

#include <cstdint>
#include <string>

#include "executor/stage_math.hpp"
#include "profiles/job.hpp"
#include "profiles/profile.hpp"
#include "tools/backends.hpp"

namespace recycle::tools {

/// The executor's workload for one layer of the job's model on one GPU: a transformer block of
/// the model's width and style (its norm, gated MLP or not, biases or not, rotary positions when
/// the model has no learned ones), with heads / tp of its heads and kv_heads / tp of its key/value
/// heads (of its head_dim) and an MLP of ffn_hidden / tp (one tensor-parallel rank's share; the
/// whole layer with tp 1), on micro-batches of `parallel.microbatch_size` sequences of its
/// sequence length. InputError naming --job and the field when a size is beyond the executor's
/// range or a rotary model's head_dim is odd. For a job that synthesizes
/// (planner::job_model(job) has checked that tp divides the heads, the key/value heads and the
/// MLP).
[[nodiscard]] executor::StageShape job_layer_shape(const profiles::Job& job);

struct JobMeasurement {
  profiles::Profile profile;  ///< the job's pipeline: each stage its layers x the measured layer
  std::string table;          ///< the comparison, as `profile measure --job` prints it
};

/// Times one layer of the job's model (job_layer_shape) on `backend` (`repetitions` runs, the
/// median) and builds the job's profile from it: worker stage s costs its layers (the
/// synthesizer's split) times the layer's F, I, W and step, with tp above 1 the synthesizer's
/// tensor-parallel all-reduces added to F and I (one device cannot run them), holds as many
/// layers' activations and weights, and sends one layer's output. The embedding and the output
/// layer are not timed (they are not the executor's workload): the table says so.
[[nodiscard]] JobMeasurement measure_job(const profiles::Job& job, Backend backend,
                                         std::int32_t repetitions);

}  // namespace recycle::tools
