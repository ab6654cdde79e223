// Shorthands shared by the profiles tests.
#pragma once

#include <string>

#include "profiles/model_spec.hpp"

namespace recycle::profiles::testing {

/// A model spec shipped in profiles/models/, by file name without ".json".
inline ModelSpec shipped(const std::string& name) {
  return load_model(std::string(RECYCLE_SOURCE_DIR) + "/profiles/models/" + name + ".json");
}

}  // namespace recycle::profiles::testing
