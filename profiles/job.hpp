// Job files: one JSON a user writes once — the model, the hardware, the parallel configuration
// and the schedule — which `plan`, `simulate`, `degradation` and `profile synth` accept with
// `--job FILE`, and `replay` and `study` with its resilience blocks. Format "recycle.job/1"
// (docs/profiles.md). Unknown keys are an error: a typo must not be silently ignored.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "profiles/gpu_spec.hpp"
#include "profiles/model_spec.hpp"
#include "profiles/resilience.hpp"
#include "profiles/synthesizer.hpp"

namespace recycle::profiles {

struct Job {
  std::string source;  ///< the file it came from
  std::string name;
  ModelSpec model;
  GpuSpec gpu;
  ParallelConfig parallel;
  std::string schedule = "1f1b";
  /// The cluster, detection, checkpoint and restart blocks (`recycle replay`), defaults filled.
  Resilience resilience;
};

/// InputError naming `source` and the field for anything missing, mistyped, out of range or
/// unknown, and for model or hardware names that are not shipped (listing the known ones).
[[nodiscard]] Job job_from_json(const nlohmann::json& json, const std::string& source);
/// The job file's "parallel" block for `parallel`, every field written (job_from_json reads it
/// back to the same configuration).
[[nodiscard]] nlohmann::ordered_json parallel_to_json(const ParallelConfig& parallel);
/// The job file of `parallel` and `schedule` for `model` on `hardware`, each as a job file holds
/// it (a shipped name or a spec), without the resilience blocks (their defaults): the parallel and
/// optimizer blocks job_from_json reads back to the same configuration.
[[nodiscard]] nlohmann::ordered_json job_to_json(const nlohmann::json& model,
                                                 const nlohmann::json& hardware,
                                                 const ParallelConfig& parallel,
                                                 const std::string& schedule);
/// "none", "selective" or "full", as job files name them.
[[nodiscard]] const char* to_string(Recompute recompute) noexcept;
[[nodiscard]] Job load_job(const std::string& path);

}  // namespace recycle::profiles
