// The resilience policies a job replay compares (docs/policies.md gives each one's costs and the
// source it follows). A policy reacts to what happens to the job's nodes — a node that held a
// slot failed, a node came back and joined the spare pool — by telling the clock what the job
// does next: stall for a cause, run at the iteration time of its new configuration, or wait.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.hpp"
#include "sim/replay/replay_clock.hpp"
#include "sim/replay/replay_rates.hpp"
#include "sim/replay/replay_slots.hpp"

namespace recycle::sim {

enum class PolicyKind : std::uint8_t { kRecycle, kCheckpoint, kElastic, kOobleck, kBamboo };

/// The five, in the order `--policy all` runs and reports them.
[[nodiscard]] const std::vector<PolicyKind>& all_policies();
[[nodiscard]] std::string_view to_string(PolicyKind kind) noexcept;
/// "recycle", "checkpoint", "elastic", "oobleck", "bamboo"; InputError naming `where` otherwise.
[[nodiscard]] PolicyKind parse_policy(std::string_view name, const std::string& where);
/// "all" or a comma list of names, each once; InputError naming `where` otherwise.
[[nodiscard]] std::vector<PolicyKind> parse_policies(std::string_view text,
                                                     const std::string& where);

/// The fixed costs of the job's resilience blocks, in simulated time.
struct ResilienceCosts {
  Nanos detection = 0;            ///< heartbeat period x missed beats
  Nanos restart = 0;              ///< job restart + checkpoint load
  Nanos write = 0;                ///< one checkpoint write
  Nanos oobleck_reconfigure = 0;  ///< Oobleck's re-instantiation (sim/replay/reconfiguration.hpp)
  Nanos bamboo_reconfigure = 0;   ///< Bamboo's reconfiguration
};

/// What a policy works on.
struct PolicyContext {
  JobClock& clock;
  JobSlots& slots;
  ReplayRates& rates;
  ResilienceCosts costs;
  std::int64_t fallbacks = 0;  ///< restarts from a checkpoint the policy had to make
};

class Policy {
 public:
  virtual ~Policy() = default;
  /// Time 0: the nodes down from the start have left their slots; nothing to detect.
  virtual void start(PolicyContext& ctx) = 0;
  /// The node that held `slot` failed (the slot is empty now).
  virtual void slot_lost(PolicyContext& ctx, std::int64_t slot) = 0;
  /// A node came back and joined the spare pool.
  virtual void node_joined(PolicyContext& ctx) = 0;
};

[[nodiscard]] std::unique_ptr<Policy> make_policy(PolicyKind kind);

}  // namespace recycle::sim
