// Failed workers: parsing `--fail DP:STAGE[,DP:STAGE...]`, and failure normalization.
//
// Two failure sets that differ only by a relabelling of the DP indices (which pipeline is called
// 0, which 1) need the same plan, relabelled. The canonical form orders the pipelines by their
// failed stages: pipelines with more failures first, then by the sorted list of failed stages,
// then by original index; fault-free pipelines last. Plans are made (and stored in plan tables)
// in canonical labels and mapped back. That needs interchangeable pipelines
// (Cluster::pipelines_interchangeable): where several pipelines share a node, relabelling them
// changes which transfers stay inside a node, and plans keep the original labels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/language/schedule.hpp"

namespace recycle::planner {

/// Parses "0:3,2:1" into sorted workers; InputError naming `flag` on syntax errors, workers
/// outside the layout, or a worker listed twice.
[[nodiscard]] std::vector<WorkerId> parse_failures(const std::string& text, const Layout& layout,
                                                   const std::string& flag = "--fail");

struct CanonicalFailures {
  std::vector<WorkerId> failed;            ///< in canonical labels, sorted
  std::vector<std::int32_t> to_canonical;  ///< original dp -> canonical dp
  std::vector<std::int32_t> to_original;   ///< canonical dp -> original dp
  std::string key;                         ///< e.g. "0:3,0:5,1:2": identical for relabelled sets
};

[[nodiscard]] CanonicalFailures canonicalize(const std::vector<WorkerId>& failed,
                                             const Layout& layout);
/// The failure set in its own labels (identity maps; the key names the original workers).
[[nodiscard]] CanonicalFailures keep_labels(const std::vector<WorkerId>& failed,
                                            const Layout& layout);

/// Relabels every dp index (workers, owners, failed workers, routes) through `to_new` and re-sorts.
[[nodiscard]] Schedule relabel(const Schedule& schedule, const std::vector<std::int32_t>& to_new);

/// The first stage all of whose DP replicas have failed, or -1.
[[nodiscard]] std::int32_t dead_stage(const std::vector<WorkerId>& failed, const Layout& layout);

}  // namespace recycle::planner
