// Profile JSON: read.
#include "profiles/profile.hpp"
#include "core/json.hpp"
#include "tests/fuzz/fuzz.hpp"

namespace {

void read(const std::string& text) {
  static_cast<void>(
      recycle::profiles::profile_from_json(recycle::parse_json(text, "fuzz.json"), "fuzz.json"));
}

}  // namespace

RECYCLE_FUZZ_READER(read)
