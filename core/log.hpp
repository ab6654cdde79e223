// Logging: spdlog to stderr, set up once by the command-line program. Results go to stdout or to
// files; the log is for progress and diagnostics only.
#pragma once

namespace recycle {

enum class Verbosity { kQuiet, kNormal, kVerbose };

/// kQuiet: errors only; kNormal: info and above; kVerbose: debug and above.
void setup_logging(Verbosity verbosity);

}  // namespace recycle
