// Tests that read ../shared (public failure traces and reference figures; not part of the
// project, never copied into it). Absent data makes a test SKIPPED, not passed: skip_without
// prints kSkipMarker, which CTest's SKIP_REGULAR_EXPRESSION (tests/CMakeLists.txt) reports as a
// skip. Where ../shared is known to be there (.ci/run sets RECYCLE_REQUIRE_SHARED when it is), an
// absent file fails the test instead, so a moved or renamed file cannot turn a check into a skip.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace recycle::testing {

inline constexpr const char* kSkipMarker = "RECYCLE-SKIPPED:";

/// ../shared/`relative`, or nullopt when it is not there.
inline std::optional<std::string> shared_file(const std::string& relative) {
  const std::string path = std::string(RECYCLE_SHARED_DIR) + "/" + relative;
  if (!std::filesystem::exists(path)) return std::nullopt;
  return path;
}

/// Ends a test whose data ../shared/`relative` is absent: reported skipped, or failed under
/// RECYCLE_REQUIRE_SHARED.
inline void skip_without(const std::string& relative) {
  if (std::getenv("RECYCLE_REQUIRE_SHARED") != nullptr) {
    FAIL("../shared/" << relative
                      << " is missing, and RECYCLE_REQUIRE_SHARED says ../shared is "
                         "there: the test would have been skipped");
  }
  std::printf("%s ../shared/%s is not there\n", kSkipMarker, relative.c_str());
  std::fflush(stdout);
}

}  // namespace recycle::testing
