// The replay's measured step-time table (CSV).
#include "sim/replay/step_table.hpp"
#include "tests/fuzz/fuzz.hpp"

namespace {

void read(const std::string& text) {
  static_cast<void>(recycle::sim::StepTable::parse(text, "fuzz.csv"));
}

}  // namespace

RECYCLE_FUZZ_READER(read)
