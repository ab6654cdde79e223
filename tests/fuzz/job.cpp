// Job JSON: read, synthesize the profile and the planners' model.
#include "profiles/job.hpp"
#include "core/json.hpp"
#include "planner/job_model.hpp"
#include "tests/fuzz/fuzz.hpp"

namespace {

void read(const std::string& text) {
  const auto job =
      recycle::profiles::job_from_json(recycle::parse_json(text, "fuzz.json"), "fuzz.json");
  static_cast<void>(recycle::planner::job_model(job));
}

}  // namespace

RECYCLE_FUZZ_READER(read)
