// What an in-place reconfiguration costs Oobleck and Bamboo in a job replay: the job file's
// `restart` block when it says (`oobleck_reconfigure_s`, `bamboo_reconfigure_s`, or
// `reconfigure_s` for both), otherwise the published setting for the nearest model size. Oobleck's
// artifact (SymbioticLab/Oobleck, branch sosp23-artifact, tools/simulator) charges, for GPT-3
// Medium (350M), 2.7B and 6.7B: Oobleck's re-instantiation 3, 6 and 10 s, and Bamboo's
// reconfiguration 100, 230 and 450 s. A model larger than 6.7B takes the 6.7B row (the largest
// reported: a floor, not an extrapolation), one smaller than 350M the 350M row.
#pragma once

#include <string>

#include "core/units.hpp"
#include "profiles/job.hpp"

namespace recycle::sim {

struct ReconfigurationCost {
  Seconds seconds = 0;
  std::string source;  ///< "the job file" or the published row it follows
};

[[nodiscard]] ReconfigurationCost oobleck_reconfiguration(const profiles::Job& job);
[[nodiscard]] ReconfigurationCost bamboo_reconfiguration(const profiles::Job& job);

}  // namespace recycle::sim
