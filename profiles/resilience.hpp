// The resilience blocks of a job file: the cluster the job runs on (nodes, spares, placement), how
// failures are detected, how it checkpoints and what restarting costs. `recycle replay` and
// `recycle study` read them (sim/replay/replay.hpp, docs/policies.md); every field has a default,
// so a job file without them replays on exactly the nodes its parallel block needs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include "core/units.hpp"

namespace recycle {
class JsonView;
}

namespace recycle::profiles {

struct ParallelConfig;

struct ClusterBlock {
  /// Nodes reserved for the job, spares included; 0: the job's own nodes plus the spares.
  std::int64_t nodes = 0;
  std::int32_t gpus_per_node = 0;  ///< 0: the hardware's
  std::int64_t spares = 0;         ///< nodes held idle to replace failed ones
  /// Below this many available nodes (in the job or spare) the job stops until enough are back
  /// (Varuna's simulator stops below 12); 0: no such floor.
  std::int64_t min_nodes = 0;
  /// Where workers sit: "pipeline-major" (global rank dp x pp + stage, the planner's cluster
  /// model) is the one placement supported.
};

struct DetectionBlock {
  Seconds heartbeat_s = 5;
  std::int32_t missed_beats = 3;

  /// Time from a failure to its detection: heartbeat_s x missed_beats.
  [[nodiscard]] Seconds delay_s() const noexcept { return heartbeat_s * missed_beats; }
};

struct CheckpointBlock {
  Seconds interval_s = 3600;  ///< training time between checkpoints
  /// `"interval_s": "auto"`: the replay works the interval out from the trace's failure rate
  /// (sim/replay/checkpoint_interval.hpp); interval_s is then unused.
  bool interval_auto = false;
  /// > 0: a checkpoint every this many iterations instead of every interval_s (Varuna counts
  /// steps).
  std::int64_t interval_iterations = 0;
  /// One more right after the first iteration that follows a restart from a checkpoint (Varuna's
  /// simulator).
  bool after_restart = false;
  Seconds write_s = 60;  ///< the job stops while one is written
  Seconds load_s = 300;  ///< reading one back at a restart
};

struct RestartBlock {
  Seconds job_restart_s = 600;  ///< scheduler, container and communicator start-up of the job
  /// `"job_restart_s": {"N": seconds, ...}`: the restart by the live nodes it restarts on (the
  /// largest N at most theirs, the smallest below it), as Varuna's simulator sets its restart per
  /// node count; empty: job_restart_s for every configuration.
  std::map<std::int64_t, Seconds> job_restart_by_nodes;
  Seconds node_join_s = 60;  ///< a repaired or spare node's start-up before it can join
  /// An in-place reconfiguration's fixed cost for both Oobleck and Bamboo, when given; each
  /// policy's own key wins over it, and without either the replay takes the published setting for
  /// the model's size (sim/replay/reconfiguration.hpp).
  std::optional<Seconds> reconfigure_s;
  std::optional<Seconds> oobleck_reconfigure_s;  ///< Oobleck's re-instantiation
  std::optional<Seconds> bamboo_reconfigure_s;   ///< Bamboo's reconfiguration
  /// Nodes that fail at one instant are one burst, detected and recovered from together (one
  /// rendezvous: Varuna drops the events that arrive while a morph is under way); false: one
  /// after another, as Bamboo's simulator takes its preemptions.
  bool merge_simultaneous = true;
  /// false: a restart keeps what the job trained (it re-forms from the state its survivors hold,
  /// as Bamboo's simulator has it) and throws away only the iteration in progress.
  bool rollback = true;
  /// When a repaired or new node joins a running job: at once (`now`), or at the job's next
  /// failure or restart (`next_failure`: Oobleck's and Varuna's simulators add waiting nodes only
  /// then). A job that is not running takes it at once either way.
  bool join_at_next_failure = false;
};

struct Resilience {
  ClusterBlock cluster;
  DetectionBlock detection;
  CheckpointBlock checkpoint;
  RestartBlock restart;

  /// Nodes the job's workers occupy: tp x pp x dp GPUs over gpus_per_node.
  std::int64_t job_nodes = 0;
};

/// Reads the optional blocks of `root` ("cluster", "detection", "checkpoint", "restart"), checks
/// them against the parallel configuration and the hardware's GPUs per node, and fills in the
/// defaults. InputError naming the field: unknown keys, negative times, a checkpoint interval
/// that rounds to 0 ns (positive_nanos), more spares than nodes, a job larger than its cluster. A
/// worker that straddles two nodes fails with either.
[[nodiscard]] Resilience resilience_from_json(const JsonView& root, const ParallelConfig& parallel,
                                              std::int32_t hardware_gpus_per_node);

}  // namespace recycle::profiles
