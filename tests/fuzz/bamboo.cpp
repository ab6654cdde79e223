// The Bamboo spot-instance trace importer.
#include "tests/fuzz/fuzz.hpp"
#include "traces/import_bamboo.hpp"

namespace {

void read(const std::string& text) {
  static_cast<void>(recycle::traces::parse_bamboo(text, "fuzz.csv", {}));
}

}  // namespace

RECYCLE_FUZZ_READER(read)
