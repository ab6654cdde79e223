// The flags that describe a pipeline and its op costs, shared by every subcommand that builds a
// schedule: --pp, --microbatches, --dp, --interleave, and --costs F,I,W or --profile FILE.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "planner/cost_model.hpp"
#include "planner/costs.hpp"
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

  /// Adds the flags to `app`; --costs and --profile exclude each other.
  void add_to(CLI::App& app);
  /// Adds --network.
  void add_network_to(CLI::App& app);
  /// How schedules run, from --network.
  [[nodiscard]] planner::RunOptions run_options() const;

  /// The layout; throws InputError naming a missing flag.
  [[nodiscard]] planner::Layout layout() const;
  /// Costs per virtual stage from --costs or --profile; F = I = W = 1 s when neither is given.
  [[nodiscard]] planner::Costs costs_for(const planner::Layout& layout) const;
  /// The profile named by --profile, if any.
  [[nodiscard]] std::optional<profiles::Profile> load_profile() const;
  /// What the planners and the simulator charge: the profile's costs, bytes and network, or the
  /// --costs times on a free network.
  [[nodiscard]] planner::CostModel model_for(const planner::Layout& layout) const;
};

/// "2.5" for 5 chunks of interleave 2: activations held, in micro-batches.
[[nodiscard]] std::string fmt_microbatches(std::int32_t chunks, std::int32_t interleave);

}  // namespace recycle::tools
