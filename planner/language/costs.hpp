// Op costs as the planner sees them: the time of each compute action, per virtual stage.
// `--costs F,I,W` gives one triple for every virtual stage; a profile gives per-stage costs that
// are split evenly over the interleave chunks of a stage.
#pragma once

#include <cstdint>
#include <vector>

#include "core/units.hpp"
#include "planner/language/action.hpp"

namespace recycle::planner {

struct StageCost {
  Nanos forward = 0;
  Nanos backward_input = 0;
  Nanos backward_weight = 0;

  friend bool operator==(const StageCost&, const StageCost&) = default;
};

struct Costs {
  std::vector<StageCost> virtual_stages;  ///< indexed by virtual stage
  std::vector<Nanos> optimizer;           ///< per iteration, indexed by physical stage; empty: free

  /// The same cost for every one of `virtual_stages` virtual stages.
  [[nodiscard]] static Costs uniform(std::int32_t virtual_stages, StageCost cost);

  /// Duration of a compute action (B = I + W); OPT costs the stage's optimizer time; others 0.
  [[nodiscard]] Nanos duration(const Action& action) const noexcept;
};

}  // namespace recycle::planner
