#include "tools/job_measure.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"
#include "planner/job_model.hpp"
#include "profiles/synthesizer.hpp"

namespace recycle::tools {

namespace {

/// InputError naming --job, the file and the field.
[[noreturn]] void refuse(const profiles::Job& job, const std::string& field,
                         const std::string& why) {
  throw InputError("--job", job.source + ": " + field + ": " + why);
}

/// A job field as the executor's int32 shape holds it.
std::int32_t narrow(const profiles::Job& job, const std::string& field, std::int64_t value) {
  if (value < 1 || value > std::numeric_limits<std::int32_t>::max())
    refuse(job, field, std::to_string(value) + " is out of the executor's range");
  return static_cast<std::int32_t>(value);
}

/// The job as the executor computes it: fp32, no recomputation, attention that keeps its
/// probabilities, no dropout, and with tp above 1 no sequence parallelism (a rank's layer norms
/// and residuals see every token); what the synthesizer is asked about to compare like with like.
profiles::Synthesis synthesize_as_executed(profiles::Job job) {
  job.parallel.dtype = profiles::DType::kFp32;
  job.parallel.recompute = profiles::Recompute::kNone;
  job.parallel.flash_attention = false;
  job.parallel.sequence_parallel = false;
  job.model.dropout = false;
  return planner::job_model(job).synthesis;
}

std::string ms(Nanos ns) {
  return fmt::format("{:.4g}", to_seconds(ns) * 1e3);
}

std::string ratio(Nanos measured, Nanos synthesized) {
  return synthesized > 0 ? fmt::format("{:.2f}", static_cast<double>(measured) /
                                                     static_cast<double>(synthesized))
                         : "-";
}

}  // namespace

executor::StageShape job_layer_shape(const profiles::Job& job) {
  const profiles::ModelSpec& m = job.model;
  executor::StageShape shape;
  shape.block = executor::Block::kTransformer;
  shape.style = {.gated_mlp = m.gated_mlp,
                 .bias = m.bias,
                 .rms_norm = m.norm == profiles::Norm::kRmsNorm,
                 .rotary = !m.learned_positions};
  if (shape.style.rotary && m.head_dim % 2 != 0) {
    refuse(job, "model.head_dim",
           std::to_string(m.head_dim) + " is odd: rotary positions pair a head's features");
  }
  // One tensor-parallel rank's share: the synthesizer has checked that tp divides the heads, the
  // key/value heads and the MLP.
  const std::int64_t tp = job.parallel.tp;
  shape.layers = 1;
  shape.width = narrow(job, "model.hidden", m.hidden);
  shape.heads = narrow(job, "model.heads", m.heads / tp);
  shape.kv_heads = narrow(job, "model.kv_heads", m.kv_heads / tp);
  shape.head_dim = narrow(job, "model.head_dim", m.head_dim);
  shape.ffn = narrow(job, "model.ffn_hidden", m.ffn_hidden / tp);
  shape.sequence = narrow(job, "model.sequence_length", m.sequence_length);
  shape.microbatch_size = narrow(job, "parallel.microbatch_size", job.parallel.microbatch_size);
  return shape;
}

JobMeasurement measure_job(const profiles::Job& job, Backend backend, std::int32_t repetitions) {
  // The synthesizer's checks (tp, batch, layers per stage) and the job's (its schedule runs on
  // its layout, a stage fits its worker) before anything is timed.
  const planner::JobModel own = planner::job_model(job);
  planner::require_runnable(own);
  const profiles::Synthesis& split = own.synthesis;
  const executor::StageShape shape = job_layer_shape(job);
  const profiles::Synthesis predicted = synthesize_as_executed(job);
  // What one device cannot run: the tensor-parallel all-reduces, in F and again in I.
  const Nanos collectives = predicted.layer_tp_collectives;
  const profiles::Profile layer = [&] {
    try {
      return measure_profile(backend, shape, 1, 2, repetitions);
    } catch (const InputError& e) {
      if (e.where().starts_with("--backend")) throw;  // the backend's, not the job's
      // The shape came from the job, not from the shape flags the message names.
      refuse(job, "its layer (" + describe_layers(shape) + ")", e.problem());
    }
  }();
  const profiles::StageProfile& one = layer.stages.front();

  JobMeasurement out;
  profiles::Profile& p = out.profile;
  p.name = job.model.name + " from one measured layer (" + layer.name + ")";
  p.hardware = layer.hardware;
  const auto pp = static_cast<std::size_t>(job.parallel.pp);
  std::vector<std::int64_t> layers(pp, 0);
  for (std::size_t v = 0; v < split.layers.size(); ++v) layers[v % pp] += split.layers[v];
  for (const std::int64_t n : layers) {
    profiles::StageProfile s = one;
    s.forward = n * (one.forward + collectives);
    s.backward_input = n * (one.backward_input + collectives);
    s.backward_weight = n * one.backward_weight;
    s.optimizer = n * one.optimizer;
    s.activation_bytes = n * one.activation_bytes;
    s.param_bytes = n * one.param_bytes;
    s.optimizer_state_bytes = 0;
    p.stages.push_back(s);
  }

  std::string& t = out.table;
  const std::int32_t tp = job.parallel.tp;
  t += fmt::format(
      "{}: {}, micro-batches of {} x {} tokens, hidden {}, {} heads{}{}, on the {} backend\n",
      job.model.name,
      tp == 1 ? std::string("one layer")
              : fmt::format("one tensor-parallel rank's share of a layer (tp {})", tp),
      shape.microbatch_size, shape.sequence, shape.width, shape.heads,
      shape.kv_heads == shape.heads
          ? std::string()
          : fmt::format(" ({} key/value head{})", shape.kv_heads, shape.kv_heads == 1 ? "" : "s"),
      tp == 1 ? std::string() : fmt::format(" of {}, an MLP of {}", shape.head_dim, shape.ffn),
      backend == Backend::kCuda ? "cuda" : "cpu");
  t += fmt::format("{:<32} {:>14} {:>12} {:>8}\n", "per layer and micro-batch", "synthesized ms",
                   "measured ms", "ratio");
  const auto row = [&t](const char* name, Nanos synthesized, Nanos measured) {
    t += fmt::format("{:<32} {:>14} {:>12} {:>8}\n", name, ms(synthesized), ms(measured),
                     ratio(measured, synthesized));
  };
  // The synthesizer's F and I include the collectives; the rows compare the arithmetic alone.
  row("F", predicted.layer_forward - collectives, one.forward);
  row("I", predicted.layer_backward_input - collectives, one.backward_input);
  row("W", predicted.layer_backward_weight, one.backward_weight);
  t += fmt::format("{:<32} {:>14} {:>12}\n", "optimizer step (SGD)", "-", ms(one.optimizer));
  if (tp > 1) {
    t += fmt::format("{:<32} {:>14} {:>12}\n", "tp all-reduces, in F and in I", ms(collectives),
                     "not run");
  }
  t += fmt::format(
      "ratio: measured / synthesized; synthesized for {} in fp32 without recomputation, flash "
      "attention or dropout (the executor's arithmetic){}\n",
      job.gpu.name, tp > 1 ? ", the tensor-parallel all-reduces apart" : "");
  std::string split_text;
  for (std::size_t s = 0; s < layers.size(); ++s)
    split_text += (s == 0 ? "" : ", ") + std::to_string(layers[s]);
  t += fmt::format(
      "profile: {} stages of {} layers, each the measured layer{} times its layers; the embedding "
      "(stage 0) and the output layer (stage {}) are not timed\n",
      layers.size(), split_text, tp > 1 ? " plus the synthesized all-reduces in F and I" : "",
      layers.size() - 1);
  return out;
}

}  // namespace recycle::tools
