#include "planner/language/text_timeline.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace recycle::planner {

namespace {

/// The label drawn for an action: the token without the virtual stage when it equals the row's
/// stage (interleave 1), the full token otherwise.
std::string label(const Action& a, const WorkerSchedule& worker, const Layout& layout) {
  std::string token = to_token(a, worker.id.dp);
  if (layout.interleave > 1) return token;
  const auto first_letter = token.find_first_not_of("0123456789");
  return token.substr(first_letter);
}

}  // namespace

std::string render_text_timeline(const Schedule& schedule, const Timeline& timeline,
                                 const TextTimelineOptions& options) {
  const Layout& layout = schedule.layout;
  // The time quantum: the gcd of every boundary, so each action covers whole columns when it can.
  Nanos quantum = 0;
  std::size_t widest_label = 1;
  for (std::size_t w = 0; w < schedule.workers.size(); ++w) {
    const auto& actions = schedule.workers[w].actions;
    for (std::size_t i = 0; i < actions.size(); ++i) {
      if (!is_compute(actions[i].type)) continue;
      quantum =
          std::gcd(quantum, std::gcd(timeline.workers[w][i].start, timeline.workers[w][i].end));
      widest_label = std::max(widest_label, label(actions[i], schedule.workers[w], layout).size());
    }
  }
  const Nanos makespan = std::max<Nanos>(timeline.makespan, 1);
  if (quantum <= 0) quantum = makespan;
  // Columns per quantum: enough for the shortest action to show its label, within max_columns.
  Nanos shortest = makespan;
  for (std::size_t w = 0; w < schedule.workers.size(); ++w) {
    const auto& actions = schedule.workers[w].actions;
    for (std::size_t i = 0; i < actions.size(); ++i) {
      const Nanos d = timeline.workers[w][i].end - timeline.workers[w][i].start;
      if (is_compute(actions[i].type) && d > 0) shortest = std::min(shortest, d);
    }
  }
  const auto budget = static_cast<double>(options.max_columns);
  double columns_per_ns = static_cast<double>(widest_label + 1) / static_cast<double>(shortest);
  columns_per_ns = std::max(columns_per_ns, 1.0 / static_cast<double>(quantum));
  columns_per_ns = std::min(columns_per_ns, budget / static_cast<double>(makespan));
  const auto column = [&](Nanos t) {
    return static_cast<std::size_t>(static_cast<double>(t) * columns_per_ns + 0.5);
  };
  const std::size_t width = column(makespan);

  std::string out = fmt::format("{}: dp {} x pp {}", schedule.generator, layout.dp, layout.pp);
  if (layout.interleave > 1) out += fmt::format(" x {} chunks", layout.interleave);
  out += fmt::format(", {} micro-batches, makespan {:g} s; one column = {:.4g} s\n",
                     layout.microbatches, to_seconds(makespan), 1.0 / columns_per_ns / 1e9);

  const std::size_t tick_every = 10;
  std::string axis_labels;
  for (std::size_t c = 0; c < width; c += tick_every) {
    const std::string tick = fmt::format("{:.3g}", static_cast<double>(c) / columns_per_ns / 1e9);
    if (axis_labels.size() <= c) {
      axis_labels.resize(c, ' ');
      axis_labels += tick;
    }
  }
  out += fmt::format("{:<10}{}\n", "time (s)", axis_labels);

  for (std::size_t w = 0; w < schedule.workers.size(); ++w) {
    const WorkerSchedule& worker = schedule.workers[w];
    std::string line(width, '.');
    for (std::size_t i = 0; i < worker.actions.size(); ++i) {
      const Action& a = worker.actions[i];
      if (!is_compute(a.type)) continue;
      const std::size_t begin = column(timeline.workers[w][i].start);
      const std::size_t end = std::max(begin + 1, column(timeline.workers[w][i].end));
      std::string text = label(a, worker, layout);
      for (std::size_t c = begin; c < end && c < width; ++c) {
        line[c] = c - begin < text.size() ? text[c - begin] : ' ';
      }
    }
    out += fmt::format("{:<10}{}\n", to_string(worker.id), line);
  }
  return out;
}

}  // namespace recycle::planner
