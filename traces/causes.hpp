// Cause mixes for the generator: which cause each generated failure gets, drawn by weight. A mix is
// a preset name or a list `NAME:WEIGHT,NAME:WEIGHT,...`. Presets (counts as published):
//  - `llama3`: Llama 3 405B pre-training, 419 unexpected interruptions in 54 days on 16,384 H100s
//    (Dubey et al., "The Llama 3 Herd of Models", 2024, Table 5), "Category / Component";
//  - `infinitehbd`: StepFun's InfiniteHBD trace, 584 faults of 400 servers over 348 days
//    (fault_statistics.json), "Level / Class";
//  - `none`: no cause.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/rng.hpp"

namespace recycle::traces {

struct CauseShare {
  std::string cause;
  double weight = 0;
};

class CauseMix {
 public:
  /// The empty mix: failures have no cause.
  CauseMix() = default;

  /// A preset name or `NAME:WEIGHT,...`; `where` names the flag in errors.
  [[nodiscard]] static CauseMix parse(std::string_view spec, const std::string& where);

  [[nodiscard]] bool empty() const noexcept { return shares_.empty(); }
  [[nodiscard]] const std::vector<CauseShare>& shares() const noexcept { return shares_; }
  /// Index of a share, drawn with probability weight / total weight.
  [[nodiscard]] std::size_t draw(Rng& rng) const;
  /// How it was given: the preset name or the list.
  [[nodiscard]] const std::string& spec() const noexcept { return spec_; }

 private:
  CauseMix(std::string spec, std::vector<CauseShare> shares);

  std::string spec_ = "none";
  std::vector<CauseShare> shares_;
  std::vector<double> cumulative_;
};

/// Names of the preset mixes, for help texts.
[[nodiscard]] std::vector<std::string_view> cause_preset_names();

}  // namespace recycle::traces
