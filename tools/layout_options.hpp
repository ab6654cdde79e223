// The flags that describe a pipeline and its op costs, shared by every subcommand that builds a
// schedule: --pp, --microbatches, --dp, --interleave, and --costs F,I,W or --profile FILE; or
// --job FILE, which gives all of them (profiles/job.hpp: the layout from its parallel block, the
// profile synthesized from its model and hardware).
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "planner/cost_model.hpp"
#include "planner/costs.hpp"
#include "planner/job_model.hpp"
#include "planner/period.hpp"
#include "planner/schedule.hpp"
#include "profiles/profile.hpp"

namespace recycle::tools {

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

  /// The layout; throws InputError naming a missing flag.
  [[nodiscard]] planner::Layout layout() const;
  /// Costs per virtual stage from --costs or --profile; F = I = W = 1 s when neither is given.
  [[nodiscard]] planner::Costs costs_for(const planner::Layout& layout) const;
  /// The profile named by --profile, or synthesized from --job, if any.
  [[nodiscard]] std::optional<profiles::Profile> load_profile() const;
  /// The job and its model from --job (read and synthesized once), if any.
  [[nodiscard]] const planner::JobModel* job_model() const;
  [[nodiscard]] const profiles::Job* loaded_job() const;
  /// The flag that gave the costs: --job, --profile or --costs.
  [[nodiscard]] std::string cost_source() const;
  /// Refuses an iteration that takes no time (every cost zero): its throughput and every ratio to
  /// it are undefined. Names cost_source().
  void require_time(Nanos iteration_time) const;
  /// What the planners and the simulator charge: the profile's costs, bytes and network, or the
  /// --costs times on a free network.
  [[nodiscard]] planner::CostModel model_for(const planner::Layout& layout) const;

 private:
  void read_job() const;
  mutable std::optional<profiles::Job> job_;
  mutable std::optional<planner::JobModel> job_model_;
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
