// The native trace CSV: read strictly and leniently.
#include "traces/native_csv.hpp"
#include "tests/fuzz/fuzz.hpp"

namespace {

void read(const std::string& text) {
  recycle::traces::ImportOptions options;
  try {
    static_cast<void>(recycle::traces::parse_native_csv(text, "fuzz.csv", options));
  } catch (const recycle::InputError&) {
  }
  options.lenient = true;
  static_cast<void>(recycle::traces::parse_native_csv(text, "fuzz.csv", options));
}

}  // namespace

RECYCLE_FUZZ_READER(read)
