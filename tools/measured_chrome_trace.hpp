// A measured run's timeline (`recycle validate --chrome-trace`) in the Chrome trace format the
// simulator writes (sim/chrome_trace.hpp, the one writer), so predicted and measured open side by
// side: the executor's records and the simulator's writer meet here, in the program, as neither
// library includes the other.
#pragma once

#include <string>

#include "executor/runtime.hpp"
#include "planner/language/schedule.hpp"

namespace recycle::tools {

/// The measured timeline in the format of `recycle simulate --chrome-trace`: compute actions and
/// OPT on the compute track, SEND/RECV on the communication track, REDUCE_GRAD (including the wait
/// for the peers) on the all-reduce track; work of dropped iterations in category "dropped"; on
/// shared cores each action's processor time in its args; each kill, detection and resumption as
/// an instant event.
[[nodiscard]] std::string measured_chrome_trace(const planner::Schedule& first,
                                                const executor::RunResult& run);

}  // namespace recycle::tools
