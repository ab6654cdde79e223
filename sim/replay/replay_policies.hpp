// The resilience policies a job replay compares (docs/policies.md gives each one's costs and the
// source it follows). A policy reacts to what happens to the job's nodes — a node that held a
// slot failed, a node came back and joined the spare pool — by telling the clock what the job
// does next: stall for a cause, run at the iteration time of its new configuration, or wait.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "sim/replay/replay_clock.hpp"
#include "sim/replay/replay_rates.hpp"
#include "sim/replay/replay_slots.hpp"

namespace recycle::sim {

enum class PolicyKind : std::uint8_t {
  kRecycle,
  kCheckpoint,
  kElastic,
  kOobleck,
  kBamboo,
  kAdaptive
};

/// The six, in the order `--policy all` runs and reports them.
[[nodiscard]] const std::vector<PolicyKind>& all_policies();
[[nodiscard]] std::string_view to_string(PolicyKind kind) noexcept;
/// "recycle", "checkpoint", "elastic", "oobleck", "bamboo", "adaptive"; InputError naming `where`
/// otherwise.
[[nodiscard]] PolicyKind parse_policy(std::string_view name, const std::string& where);
/// "all" or a comma list of names, each once; InputError naming `where` otherwise.
[[nodiscard]] std::vector<PolicyKind> parse_policies(std::string_view text,
                                                     const std::string& where);

/// The fixed costs of the job's resilience blocks, in simulated time.
struct ResilienceCosts {
  Nanos detection = 0;  ///< heartbeat period x missed beats
  Nanos restart = 0;    ///< job restart + checkpoint load
  /// By the live nodes the job restarts on, where the job file gives a table: the entry of the
  /// largest count at most theirs (the smallest's below it), checkpoint load included.
  std::map<std::int64_t, Nanos> restart_by_nodes;
  Nanos write = 0;                ///< one checkpoint write
  Nanos oobleck_reconfigure = 0;  ///< Oobleck's re-instantiation (sim/replay/reconfiguration.hpp)
  Nanos bamboo_reconfigure = 0;   ///< Bamboo's reconfiguration
  /// How long the adaptive policy expects a configuration to last: to the next event of the job's
  /// nodes, half the job's mean time between failures on the trace (a failure and its repair).
  Nanos horizon = 0;
};

/// What a policy works on.
struct PolicyContext {
  JobClock& clock;
  JobSlots& slots;
  ReplayRates& rates;
  ResilienceCosts costs;
  std::int64_t fallbacks = 0;  ///< restarts from a checkpoint the policy had to make

  /// What a restart costs now, on the live nodes the job has.
  [[nodiscard]] Nanos restart() const;
  /// The job's live nodes and the cluster's (spares included), as step tables key them.
  [[nodiscard]] LiveNodes live() const;
};

class Policy {
 public:
  virtual ~Policy() = default;
  /// Time 0: the nodes down from the start have left their slots; nothing to detect.
  virtual void start(PolicyContext& ctx) = 0;
  /// The nodes that held `slots` failed at one instant (the slots are empty now): a burst is
  /// detected once and recovered from in one reconfiguration.
  virtual void slots_lost(PolicyContext& ctx, const std::vector<std::int64_t>& slots) = 0;
  /// A node came back and joined the spare pool.
  virtual void node_joined(PolicyContext& ctx) = 0;
  /// How often the policy took each of its actions, for a policy that chooses (adaptive).
  [[nodiscard]] virtual std::vector<std::pair<std::string, std::int64_t>> actions() const {
    return {};
  }
};

/// The policy; with `min_nodes` > 0, wrapped so that the job stops (back to its checkpoint) when
/// fewer nodes than that are available, and restarts once enough are back.
[[nodiscard]] std::unique_ptr<Policy> make_policy(PolicyKind kind, std::int64_t min_nodes = 0);

}  // namespace recycle::sim
