// The lowering pass: from a compute-only schedule to one a runtime can execute. Adds, on every
// worker, a RECV right before each compute that needs data from another worker and a SEND right
// after each compute whose output another worker needs (each SEND paired with exactly one RECV,
// so a valid compute schedule cannot deadlock), then REDUCE_GRAD and OPT after the last W/B.
#pragma once

#include "planner/schedule.hpp"

namespace recycle::planner {

/// `schedule` must be compute-only (no SEND/RECV/REDUCE_GRAD/OPT).
[[nodiscard]] Schedule lower(const Schedule& schedule);

/// Drops SEND/RECV/REDUCE_GRAD/OPT, leaving the compute actions in order.
[[nodiscard]] Schedule strip_to_compute(const Schedule& schedule);

}  // namespace recycle::planner
