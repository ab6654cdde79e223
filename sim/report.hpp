// A simulation's results for people and for programs: a table for the terminal and a JSON
// document ("recycle.simulation/1"). Every number is defined in docs/metrics.md.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "profiles/synthesizer.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"

namespace recycle::sim {

/// The JSON report; field order is fixed, so equal runs give equal bytes. With `job` (the
/// synthesis of a job file) it also has `mfu` and `tflops_per_gpu`.
[[nodiscard]] nlohmann::ordered_json report_json(const SimRun& run, const Metrics& metrics,
                                                 const profiles::Synthesis* job = nullptr);

/// The table: a summary, one row per worker, and the critical path by worker.
[[nodiscard]] std::string report_table(const SimRun& run, const Metrics& metrics,
                                       const profiles::Synthesis* job = nullptr);

/// "12.5 ms", "3 s", "850 ns": a duration with the unit that keeps it readable.
[[nodiscard]] std::string format_duration(Nanos ns);

/// "dp 2 x pp 4, 8 micro-batches" (and ", interleave V", ", N failed workers" when they apply).
[[nodiscard]] std::string describe_layout(const planner::Schedule& schedule);

}  // namespace recycle::sim
