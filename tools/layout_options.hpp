// The flags that describe a pipeline and its op costs, shared by every subcommand that builds a
// schedule: --pp, --microbatches, --dp, --interleave, and --costs F,I,W or --profile FILE; or
// --job FILE, which gives all of them (profiles/job.hpp: the layout from its parallel block, the
// profile synthesized from its model and hardware).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "planner/job_model.hpp"
#include "planner/language/costs.hpp"
#include "planner/language/schedule.hpp"
#include "planner/timing/cost_model.hpp"
#include "planner/timing/period.hpp"
#include "profiles/profile.hpp"

namespace recycle::tools {

/// What a command runs a schedule on: the layout, placed as the schedule places it, and the costs.
struct RunModel {
  planner::Layout layout;
  planner::CostModel model;
  const planner::JobModel* job = nullptr;  ///< with --job: the whole model (its synthesis: MFU)
};

struct LayoutOptions {
  std::int32_t pp = 0;
  std::int32_t microbatches = 0;
  std::int32_t dp = 1;
  std::int32_t interleave = 1;
  std::string costs;                ///< "F,I,W" in seconds
  std::string profile;              ///< path of a profile JSON
  std::string network = "runtime";  ///< runtime, eager or direct
  std::string job;                  ///< path of a job JSON

  /// Adds the flags to `app`; --costs, --profile and --job exclude each other, and --job the
  /// layout flags.
  void add_to(CLI::App& app);
  /// Adds the layout flags alone (--pp, --microbatches, --dp, --interleave).
  void add_layout_to(CLI::App& app);
  /// Adds --network.
  void add_network_to(CLI::App& app);
  /// How schedules run, from --network.
  [[nodiscard]] planner::RunOptions run_options() const;

  /// What `schedule` runs on. With --job: planner::job_model for that schedule (the one place a
  /// job becomes a model; made once per schedule and kept). Else the layout flags as the schedule
  /// places them (planner::layout_for) with the costs of --costs or --profile. InputError naming
  /// a missing flag.
  [[nodiscard]] RunModel resolve(std::string_view schedule) const;
  /// What a schedule file runs on: its own layout; with --job, the job's model on that layout
  /// (planner::job_model: the file's pipelines, stages and micro-batches must be the job's).
  [[nodiscard]] RunModel resolve(const planner::Layout& file_layout, const std::string& file) const;
  /// The layout as given, before a schedule places it: the flags, or the job's parallel block.
  [[nodiscard]] planner::Layout layout() const;
  /// The job file as read, if --job was given.
  [[nodiscard]] const profiles::Job* loaded_job() const;
  /// The flag that gave the costs: --job, --profile or --costs.
  [[nodiscard]] std::string cost_source() const;
  /// Refuses an iteration that takes no time (every cost zero): its throughput and every ratio to
  /// it are undefined. Names cost_source().
  void require_time(Nanos iteration_time) const;

 private:
  /// The profile --profile names, read once; null without the flag.
  [[nodiscard]] const profiles::Profile* flags_profile() const;
  /// Costs per virtual stage from --costs or --profile; F = I = W = 1 s when neither is given.
  [[nodiscard]] planner::Costs costs_for(const planner::Layout& layout) const;
  /// The costs of the flags' layout `layout` (--costs or --profile).
  [[nodiscard]] planner::CostModel flags_model(const planner::Layout& layout) const;
  /// The job model kept under `key`, made by `make` the first time.
  template <class Make>
  [[nodiscard]] RunModel kept(const std::string& key, Make make) const;
  mutable std::optional<profiles::Job> job_;
  mutable std::optional<profiles::Profile> profile_;
  /// Job models made so far, by schedule (or schedule file); a command asks for one or two.
  mutable std::map<std::string, planner::JobModel> models_;
};

/// --placement loop|v, for commands that read a schedule file: the placement the file must have
/// (by default a CSV's is inferred from its tokens, a JSON file's is its layout.placement).
struct PlacementOption {
  std::string value;

  void add_to(CLI::App& app);
  [[nodiscard]] std::optional<planner::Placement> placement() const;
};

/// "2.5" for 5 chunks of interleave 2: activations held, in micro-batches.
[[nodiscard]] std::string fmt_microbatches(std::int32_t chunks, std::int32_t interleave);

}  // namespace recycle::tools
