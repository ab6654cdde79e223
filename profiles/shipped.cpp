#include "profiles/shipped.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json.hpp"

namespace recycle::profiles {

namespace {

const ShippedSpec& find(const std::vector<ShippedSpec>& specs, const std::string& name,
                        const std::string& field, const char* what) {
  std::string known;
  for (const ShippedSpec& s : specs) {
    if (s.name == name) return s;
    known += (known.empty() ? "" : ", ") + std::string(s.name);
  }
  throw InputError(field, "unknown " + std::string(what) + " \"" + shown(name) +
                              "\" (known: " + known + "; or give an inline spec)");
}

}  // namespace

ModelSpec shipped_model(const std::string& name, const std::string& field) {
  const ShippedSpec& s = find(shipped_models(), name, field, "model");
  const std::string source = "profiles/models/" + std::string(s.name) + ".json";
  return model_from_json(parse_json(std::string(s.json), source), source);
}

GpuSpec shipped_gpu(const std::string& name, const std::string& field) {
  const ShippedSpec& s = find(shipped_hardware(), name, field, "hardware");
  const std::string source = "profiles/hardware/" + std::string(s.name) + ".json";
  return gpu_from_json(parse_json(std::string(s.json), source), source);
}

}  // namespace recycle::profiles
