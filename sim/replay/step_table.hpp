// Measured iteration times that override the simulated ones in a job replay (`recycle replay
// --step-table FILE`): users often know their real step times from training logs, and other
// simulators drive their replays from such tables.
//
// CSV with a header `config,iteration_s`; one row per configuration, keyed as the replay names
// configurations (docs/policies.md):
//   - `PxS`: P live pipelines of S stages each (the fault-free job, elastic's shrunk jobs);
//   - `N`:   N live nodes of the job (ReCycle's, Oobleck's and Bamboo's degraded configurations,
//            whatever the failure set);
//   - `cluster:N`: N live nodes of the cluster, spares included, for the same configurations (as
//            Oobleck's artifact keys its table by every node that is up); it wins over `N`.
// A configuration without a row keeps its simulated time.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/units.hpp"

namespace recycle::sim {

/// A row of the table: the measured iteration time, or none where the configuration does not fit
/// (`iteration_s` written `none`: out of memory, or not runnable at all).
struct StepRow {
  std::optional<Nanos> period;
};

class StepTable {
 public:
  /// nullopt: no row for the configuration (the replay simulates it).
  [[nodiscard]] std::optional<StepRow> pipelines(std::int64_t live_pipelines,
                                                 std::int64_t stages) const;
  [[nodiscard]] std::optional<StepRow> nodes(std::int64_t live_nodes) const;
  /// The `cluster:N` row for N live nodes of the cluster, spares included.
  [[nodiscard]] std::optional<StepRow> cluster_nodes(std::int64_t live_nodes) const;
  [[nodiscard]] bool empty() const noexcept { return by_key_.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return by_key_.size(); }
  /// Every row: normalized key ("PxS", "N" or "cluster:N") and iteration time (none: does not
  /// fit).
  [[nodiscard]] const std::map<std::string, StepRow>& rows() const noexcept { return by_key_; }

  /// InputError naming `source:line` for a bad header, key or time (not `none` nor a number > 0
  /// and at most 1e6 s, or one that rounds to 0 ns), or a key given twice.
  [[nodiscard]] static StepTable parse(const std::string& text, const std::string& source);
  [[nodiscard]] static StepTable load(const std::string& path);

 private:
  [[nodiscard]] std::optional<StepRow> find(const std::string& key) const;
  std::map<std::string, StepRow> by_key_;  ///< normalized keys: "P x S" as "PxS", "N" as "N"
};

}  // namespace recycle::sim
