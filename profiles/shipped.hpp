// The model and hardware specs shipped in profiles/models/ and profiles/hardware/, compiled into
// the program (profiles/CMakeLists.txt), so a job names them ("gpt3-175b", "a100-80g") and works
// wherever the binary runs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "profiles/gpu_spec.hpp"
#include "profiles/model_spec.hpp"

namespace recycle::profiles {

struct ShippedSpec {
  std::string_view name;  ///< file name without ".json"
  std::string_view json;
};

/// Generated at configure time, sorted by name.
[[nodiscard]] const std::vector<ShippedSpec>& shipped_models();
[[nodiscard]] const std::vector<ShippedSpec>& shipped_hardware();

/// The shipped model called `name`; InputError naming `field` and listing the known names.
[[nodiscard]] ModelSpec shipped_model(const std::string& name, const std::string& field);
/// The shipped GPU called `name`; InputError naming `field` and listing the known names.
[[nodiscard]] GpuSpec shipped_gpu(const std::string& name, const std::string& field);

}  // namespace recycle::profiles
