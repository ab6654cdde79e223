// The InfiniteHBD fault_trace.json importer.
#include "tests/fuzz/fuzz.hpp"
#include "traces/import_infinitehbd.hpp"

namespace {

void read(const std::string& text) {
  static_cast<void>(recycle::traces::parse_infinitehbd(text, "fuzz.json", {}));
}

}  // namespace

RECYCLE_FUZZ_READER(read)
