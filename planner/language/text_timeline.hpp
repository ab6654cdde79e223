// A schedule as text: one line per worker, its compute actions placed on a time axis, so a person
// can see the warm-up, the steady state and the bubbles in a terminal.
//
//   1f1b: dp 1 x pp 2, 2 micro-batches, makespan 9 s; one column = 0.333 s
//   time (s)  0         3         6
//   (0,0)     F0 F1 ...B0    B1
//   (0,1)     ...F0 B0    F1 B1    .
#pragma once

#include <string>

#include "planner/language/schedule.hpp"
#include "planner/language/timing.hpp"

namespace recycle::planner {

struct TextTimelineOptions {
  std::size_t max_columns = 240;  ///< the axis is coarsened until it fits
};

/// `timeline` is compute_timeline() of `schedule`. Only compute actions are drawn.
[[nodiscard]] std::string render_text_timeline(const Schedule& schedule, const Timeline& timeline,
                                               const TextTimelineOptions& options = {});

}  // namespace recycle::planner
