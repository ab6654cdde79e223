// The SimGrid state-profile importer: one profile, unrolled over 30 days when it loops.
#include "tests/fuzz/fuzz.hpp"
#include "traces/import_simgrid.hpp"

namespace {

void read(const std::string& text) {
  recycle::traces::ImportOptions options;
  options.duration = 30 * 86'400 * recycle::kNanosPerSecond;
  static_cast<void>(recycle::traces::parse_simgrid({{"node", "fuzz.txt", text}}, options));
}

}  // namespace

RECYCLE_FUZZ_READER(read)
