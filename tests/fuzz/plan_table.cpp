// Plan table JSON: read (every plan is validated on load).
#include "planner/plan_table_io.hpp"
#include "tests/fuzz/fuzz.hpp"

namespace {

void read(const std::string& text) {
  static_cast<void>(recycle::planner::plan_table_from_json(text, "fuzz.json"));
}

}  // namespace

RECYCLE_FUZZ_READER(read)
