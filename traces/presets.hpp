// Named starting points for the generator (`recycle trace gen --preset NAME`); explicit flags
// override any of their options. docs/traces.md gives the sources of every number.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "traces/generator.hpp"

namespace recycle::traces {

struct GeneratorPreset {
  std::string_view name;
  std::string_view summary;  ///< one line, for help texts
  GeneratorOptions options;  ///< seed left at 0: the user gives it
};

[[nodiscard]] const std::vector<GeneratorPreset>& generator_presets();
/// `where` names the flag in errors.
[[nodiscard]] const GeneratorPreset& find_generator_preset(std::string_view name,
                                                           const std::string& where);

}  // namespace recycle::traces
