// Where the traces tests find their inputs: small files in tests/traces/data, and the real traces
// in
// ../shared/traces-raw, which are not part of the project (tests using them skip when absent).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace recycle::traces::testing {

inline std::string data_path(const std::string& name) {
  return std::string(RECYCLE_SOURCE_DIR) + "/tests/traces/data/" + name;
}

/// A file under ../shared/traces-raw, or nullopt when that folder is not there.
inline std::optional<std::string> shared_trace(const std::string& relative) {
  const std::string path = std::string(RECYCLE_SHARED_DIR) + "/traces-raw/" + relative;
  if (!std::filesystem::exists(path)) return std::nullopt;
  return path;
}

}  // namespace recycle::traces::testing
