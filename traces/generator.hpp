// The synthetic trace generator. Failures arrive at the cluster level as a renewal process: the
// time between failure instants is exponential or Weibull, with the mean that gives `rate` failures
// per 1,000 node-days counting every node of a burst. At each instant one node, drawn uniformly
// among the nodes that are up, fails, and with the burst probability `extra` more (drawn the same
// way) fail with it; they share one cause, drawn from the cause mix. Each failed node comes back up
// after its own repair time (unless the trace ends first). Times are whole milliseconds. The same
// options and seed give the same trace, byte for byte, on every platform.
#pragma once

#include <cstdint>
#include <string>

#include "traces/causes.hpp"
#include "traces/distributions.hpp"
#include "traces/trace.hpp"

namespace recycle::traces {

struct GeneratorOptions {
  std::string preset;      ///< the preset these options started from, if any (for the record)
  std::int64_t nodes = 0;  ///< nodes in the cluster
  double days = 0;         ///< length of the trace
  double rate = 0;         ///< failures per 1,000 node-days
  TbfModel tbf;
  /// Default: the lognormal fitted to the InfiniteHBD outages (docs/traces.md).
  RepairModel repair{RepairModel::Kind::kLognormal, 0, 2.71, 2.53};
  BurstModel burst;
  CauseMix causes;
  std::uint64_t seed = 0;
};

/// Throws InputError naming the flag (`--nodes`, `--days`, ...) of the first bad option.
void validate(const GeneratorOptions& options);

/// The command line that generates this trace (recorded in the trace's comments).
[[nodiscard]] std::string command_line(const GeneratorOptions& options);

[[nodiscard]] Trace generate_trace(const GeneratorOptions& options);

}  // namespace recycle::traces
