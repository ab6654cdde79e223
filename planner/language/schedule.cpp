#include "planner/language/schedule.hpp"

#include <algorithm>

namespace recycle::planner {

const char* placement_name(Placement placement) noexcept {
  return placement == Placement::kV ? "v" : "loop";
}

std::string to_string(WorkerId id) {
  return "(" + std::to_string(id.dp) + "," + std::to_string(id.stage) + ")";
}

bool Schedule::is_lowered() const noexcept {
  // Lists that run across iterations place their own REDUCE_GRAD and OPT: only a SEND/RECV says
  // they are lowered.
  const bool lags = has_lags();
  return std::any_of(workers.begin(), workers.end(), [lags](const WorkerSchedule& w) {
    return std::any_of(w.actions.begin(), w.actions.end(), [lags](const Action& a) {
      return is_comm(a.type) || (!lags && !is_compute(a.type));
    });
  });
}

bool Schedule::has_lags() const noexcept {
  return std::any_of(workers.begin(), workers.end(), [](const WorkerSchedule& w) {
    return std::any_of(w.actions.begin(), w.actions.end(),
                       [](const Action& a) { return a.lag != 0; });
  });
}

const char* optimizer_name(const Schedule& schedule) noexcept {
  if (schedule.weight_versions == 2) return "2bw";
  return schedule.staggered_optimizer ? "staggered" : "barrier";
}

RouteTable::RouteTable(const Schedule& schedule) : layout_(schedule.layout) {
  const std::size_t per_owner =
      static_cast<std::size_t>(layout_.pp) * static_cast<std::size_t>(layout_.microbatches);
  dp_.resize(static_cast<std::size_t>(layout_.dp) * per_owner);
  for (std::int32_t owner = 0; owner < layout_.dp; ++owner) {
    std::fill_n(dp_.begin() + static_cast<std::ptrdiff_t>(owner * per_owner), per_owner, owner);
  }
  routed_.assign(static_cast<std::size_t>(layout_.dp) * static_cast<std::size_t>(layout_.pp), 0);
  for (const Route& r : schedule.routes) {
    const bool in_range = r.owner >= 0 && r.owner < layout_.dp && r.stage >= 0 &&
                          r.stage < layout_.pp && r.microbatch >= 0 &&
                          r.microbatch < layout_.microbatches;
    if (!in_range) continue;
    dp_[index(r.owner, r.stage, r.microbatch)] = r.dp;
    routed_[static_cast<std::size_t>(r.owner) * static_cast<std::size_t>(layout_.pp) +
            static_cast<std::size_t>(r.stage)] = 1;
  }
}

}  // namespace recycle::planner
