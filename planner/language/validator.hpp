// The schedule validator: checks a schedule from any source (a generator, a file, a user's hand)
// against every rule of the schedule language and reports each broken rule with the worker and
// action that breaks it. Dependencies between workers go into a Boost.Graph; a cycle there is a
// deadlock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "planner/language/schedule.hpp"

namespace recycle::planner {

enum class Rule {
  kLayout,     ///< layout values out of range
  kWorker,     ///< worker out of range, listed twice, or failed but listed
  kAction,     ///< action that cannot run on this worker (wrong stage, micro-batch or owner out of
               ///< range)
  kMissing,    ///< a micro-batch's F/I/W/B missing at some virtual stage
  kDuplicate,  ///< a micro-batch's F/I/W/B done twice at some virtual stage
  kWrongWorker,  ///< F not on the routed worker; I/W/B not on the worker that ran the F
  kOrder,        ///< on one worker: I before its F, W before its I, compute before its RECV, ...
  kRoute,      ///< bad routes table: out of range, duplicate, to a failed worker, or missing for a
               ///< failed one
  kComm,       ///< SEND without its RECV (or the reverse), or between the wrong workers
  kIteration,  ///< REDUCE_GRAD/OPT missing on some peers, duplicated, or before a W of the worker
  kDeadlock,   ///< dependency cycle between workers
  kMemory,     ///< more micro-batches' activations held at once than the limit
};

[[nodiscard]] std::string_view rule_name(Rule rule) noexcept;

struct Violation {
  Rule rule = Rule::kLayout;
  std::optional<WorkerId> worker;  ///< the worker that breaks it, if one does
  std::int32_t action_index = -1;  ///< index in that worker's action list, or -1
  std::string message;             ///< full sentence naming worker, action token and the rule
};

struct ValidationOptions {
  /// Most micro-batches whose activations one worker may hold at once (F done, W not yet).
  /// With interleave V, one chunk of one micro-batch counts 1/V.
  std::optional<std::int32_t> memory_limit;
};

/// Every broken rule, in a deterministic order; empty when the schedule is valid.
[[nodiscard]] std::vector<Violation> validate(const Schedule& schedule,
                                              const ValidationOptions& options = {});

/// "invalid schedule: FIRST VIOLATION (and N more)", or "" when there are none: how a schedule
/// refused on entry is described, whatever it came from.
[[nodiscard]] std::string summarize(const std::vector<Violation>& violations);

/// Every schedule that enters from outside (a file, a CSV, a plan table) passes here: throws
/// InputError(where, summarize(...)) unless it is valid.
void require_valid(const Schedule& schedule, const std::string& where,
                   const ValidationOptions& options = {});

/// Peak number of (virtual stage, micro-batch) pairs whose activations each worker holds at once
/// (+1 at F, -1 at W or B), parallel to Schedule::workers. Divide by interleave for micro-batches.
[[nodiscard]] std::vector<std::int32_t> peak_inflight_chunks(const Schedule& schedule);

}  // namespace recycle::planner
