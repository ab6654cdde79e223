#include "executor/run_segment.hpp"

namespace recycle::executor::detail {

Agreed::Agreed(const std::vector<SegmentFacts>& all) {
  for (const SegmentFacts& f : all) {
    kill_ns = std::max(kill_ns, f.kill_ns);
    last_iteration = std::max(last_iteration, f.last_iteration);
    if (f.detected >= 0 && (detected < 0 || f.detect_ns < detect_ns)) {
      detected = f.detected;
      detect_ns = f.detect_ns;
      last_beat_ns = f.last_beat_ns;
    }
    if (f.raised != 0 && !error) error = std::string(f.reason.data());
  }
}

}  // namespace recycle::executor::detail
