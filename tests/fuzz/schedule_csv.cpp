// PyTorch schedule CSV (compute_only and compute_comms): read and validate.
#include "planner/language/schedule_io.hpp"
#include "planner/language/validator.hpp"
#include "tests/fuzz/fuzz.hpp"

namespace {

void read(const std::string& text) {
  const auto schedule = recycle::planner::schedule_from_pytorch_csv(text, "fuzz.csv");
  static_cast<void>(recycle::planner::validate(schedule));
}

}  // namespace

RECYCLE_FUZZ_READER(read)
