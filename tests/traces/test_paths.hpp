// Where the traces tests find their inputs: small files in tests/traces/data, and the real traces
// in ../shared/traces-raw, which are not part of the project (tests/shared_data.hpp: a test whose
// trace is absent is reported skipped).
#pragma once

#include <optional>
#include <string>

#include "tests/shared_data.hpp"

namespace recycle::traces::testing {

inline std::string data_path(const std::string& name) {
  return std::string(RECYCLE_SOURCE_DIR) + "/tests/traces/data/" + name;
}

/// ../shared/traces-raw/`relative`, or nullopt when it is not there.
inline std::optional<std::string> shared_trace(const std::string& relative) {
  return recycle::testing::shared_file("traces-raw/" + relative);
}

/// Ends a test whose trace ../shared/traces-raw/`relative` is absent (reported skipped).
inline void skip_without_trace(const std::string& relative) {
  recycle::testing::skip_without("traces-raw/" + relative);
}

}  // namespace recycle::traces::testing
