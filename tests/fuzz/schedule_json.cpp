// Schedule JSON: read, validate, and a valid schedule lowered and validated again (the lowering
// of a valid schedule must be valid).
#include "planner/language/lower.hpp"
#include "planner/language/schedule_io.hpp"
#include "planner/language/validator.hpp"
#include "tests/fuzz/fuzz.hpp"

namespace {

void read(const std::string& text) {
  const recycle::planner::Schedule schedule =
      recycle::planner::schedule_from_json(text, "fuzz.json");
  if (!recycle::planner::validate(schedule).empty() || schedule.is_lowered()) return;
  const auto lowered = recycle::planner::lower(schedule);
  if (!recycle::planner::validate(lowered).empty()) __builtin_trap();
}

}  // namespace

RECYCLE_FUZZ_READER(read)
