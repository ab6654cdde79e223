// The names of the fault-free schedules, written once: the generators build them, and every
// reader of a schedule name (a job file's "schedule", --schedule, --base, --schedules) accepts
// exactly these, so no command accepts a name another refuses.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace recycle {

/// The names generate_fault_free builds, in the order `--help` lists them (aliases aside).
[[nodiscard]] const std::vector<std::string>& fault_free_generator_names();

/// `name` with the papers' aliases resolved: pipedream-flush is 1f1b (PipeDream-2BW's name for
/// it).
[[nodiscard]] std::string_view canonical_schedule_name(std::string_view name) noexcept;

/// The names a job file's "schedule" and `--schedule` accept: the fault-free ones and "recycle"
/// (ReCycle's adaptive plans on a base schedule, 1f1b unless the job or --base names another).
[[nodiscard]] const std::vector<std::string>& schedule_names();

/// Whether `name` (an alias included) is one of `names`.
[[nodiscard]] bool is_schedule_name(std::string_view name, const std::vector<std::string>& names);

/// "unknown schedule 'NAME', expected one of A, B, ...": the one wording of the refusal.
[[nodiscard]] std::string unknown_schedule_message(std::string_view name,
                                                   const std::vector<std::string>& names);

}  // namespace recycle
