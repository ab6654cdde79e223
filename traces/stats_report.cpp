#include "traces/stats_report.hpp"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace recycle::traces {

namespace {

/// Six decimals are more than any of these numbers means, and keep the JSON stable.
double round6(double x) {
  return std::round(x * 1e6) / 1e6;
}

std::string or_na(const std::optional<double>& value, std::string_view format) {
  return value ? fmt::format(fmt::runtime(format), *value) : std::string("n/a");
}

std::string weibull_text(const std::optional<WeibullFit>& fit) {
  return fit ? fmt::format("Weibull shape {:.3f}, scale {:.2f} h", fit->shape, fit->scale)
             : std::string("Weibull n/a");
}

std::string burst_text(const TraceStats& s) {
  std::string sizes;
  for (const auto& [size, count] : s.burst_sizes) {
    sizes += fmt::format("{}{} x{}", sizes.empty() ? "" : ", ", count, size);
  }
  const double mean = s.failure_instants > 0 ? static_cast<double>(s.failures) /
                                                   static_cast<double>(s.failure_instants)
                                             : 0;
  return fmt::format("{} failure instants ({}); largest {}, mean {:.3f}", s.failure_instants,
                     sizes.empty() ? "none" : sizes, s.largest_burst(), mean);
}

nlohmann::ordered_json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::ordered_json(round6(*value)) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json weibull_json(const std::optional<WeibullFit>& fit) {
  if (!fit) return nullptr;
  return {{"shape", round6(fit->shape)}, {"scale_h", round6(fit->scale)}};
}

}  // namespace

std::string format_stats_text(const TraceStats& s, const std::string& source,
                              const Repairs& repairs) {
  std::string out;
  const auto line = [&out](std::string_view label, const std::string& text) {
    out += fmt::format("{:<23}{}\n", label, text);
  };
  line("trace:", source);
  line("nodes:", fmt::format("{} ({} failed at least once)", s.nodes, s.nodes_failed));
  line("observed:",
       fmt::format("{:.3f} days; {} events from {:.3f} to {:.3f} days", to_days(s.duration),
                   s.events, to_days(s.first_event), to_days(s.last_event)));
  line("failures:", fmt::format("{} (nodes down from the start: {}; still down at the end: {})",
                                s.failures, s.initially_down, s.down_at_end));
  line("failure rate:", or_na(s.failures_per_1000_node_days, "{:.3f}") + " per 1,000 node-days");
  line("MTBF:", or_na(s.mtbf_node_h, "{:.1f}") + " h per node, " +
                    or_na(s.mtbf_cluster_h, "{:.2f}") + " h for the cluster");
  if (s.repair) {
    const RepairSummary& r = *s.repair;
    line("repair time:",
         fmt::format(
             "{} repairs: p50 {:.2f} h, p90 {:.2f} h, p99 {:.2f} h, mean {:.2f} h, max {:.2f} h",
             r.count, r.p50_h, r.p90_h, r.p99_h, r.mean_h, r.max_h));
    if (r.lognormal) {
      line("  lognormal fit:",
           fmt::format("mu {:.3f}, sigma {:.3f} of ln hours ({} repairs of length 0 left out)",
                       r.lognormal->mu, r.lognormal->sigma, r.zero));
    }
  } else {
    line("repair time:", "n/a (no outage ended)");
  }
  line("time between failures:",
       fmt::format("{} ({} gaps between failure instants, mean {:.2f} h)",
                   weibull_text(s.interarrival), s.interarrival_gaps, s.interarrival_mean_h));
  line("  per node:", fmt::format("{} ({} gaps between failures of one node)",
                                  weibull_text(s.node_tbf), s.node_tbf_gaps));
  line("bursts:", burst_text(s));
  line("nodes down at once:", fmt::format("peak {} at {:.3f} days, mean {:.2f}", s.peak_down,
                                          to_days(s.peak_down_at), s.mean_down));
  if (repairs.total() > 0) {
    line("repaired (--lenient):",
         fmt::format("dropped {} up events of nodes not down, {} down events of nodes already down",
                     repairs.up_without_down, repairs.repeated_down));
  }
  out += "causes of failures:\n";
  if (s.causes.empty()) out += "  (none)\n";
  for (const auto& [cause, count] : s.causes) {
    out += fmt::format("  {:>7} {:6.1f}%  {}\n", count,
                       100.0 * static_cast<double>(count) / static_cast<double>(s.failures),
                       cause.empty() ? "(no cause given)" : cause);
  }
  return out;
}

std::string format_stats_json(const TraceStats& s, const std::string& source,
                              const Repairs& repairs) {
  nlohmann::ordered_json j;
  j["trace"] = source;
  j["nodes"] = s.nodes;
  j["nodes_failed"] = s.nodes_failed;
  j["events"] = s.events;
  j["duration_s"] = round6(static_cast<double>(s.duration) / 1e9);
  j["first_event_s"] = round6(static_cast<double>(s.first_event) / 1e9);
  j["last_event_s"] = round6(static_cast<double>(s.last_event) / 1e9);
  j["failures"] = s.failures;
  j["initially_down"] = s.initially_down;
  j["down_at_end"] = s.down_at_end;
  j["failures_per_1000_node_days"] = optional_number(s.failures_per_1000_node_days);
  j["mtbf_node_h"] = optional_number(s.mtbf_node_h);
  j["mtbf_cluster_h"] = optional_number(s.mtbf_cluster_h);
  if (s.repair) {
    const RepairSummary& r = *s.repair;
    nlohmann::ordered_json repair = {{"count", r.count},           {"p50_h", round6(r.p50_h)},
                                     {"p90_h", round6(r.p90_h)},   {"p99_h", round6(r.p99_h)},
                                     {"mean_h", round6(r.mean_h)}, {"max_h", round6(r.max_h)},
                                     {"zero_length", r.zero}};
    repair["lognormal"] = r.lognormal
                              ? nlohmann::ordered_json{{"mu", round6(r.lognormal->mu)},
                                                       {"sigma", round6(r.lognormal->sigma)}}
                              : nlohmann::ordered_json(nullptr);
    j["repair"] = repair;
  } else {
    j["repair"] = nullptr;
  }
  j["interarrival"] = {{"gaps", s.interarrival_gaps},
                       {"mean_h", round6(s.interarrival_mean_h)},
                       {"weibull", weibull_json(s.interarrival)}};
  j["node_tbf"] = {{"gaps", s.node_tbf_gaps}, {"weibull", weibull_json(s.node_tbf)}};
  nlohmann::ordered_json sizes = nlohmann::ordered_json::object();
  for (const auto& [size, count] : s.burst_sizes) sizes[std::to_string(size)] = count;
  j["bursts"] = {
      {"failure_instants", s.failure_instants}, {"largest", s.largest_burst()}, {"sizes", sizes}};
  j["down_at_once"] = {{"peak", s.peak_down},
                       {"peak_at_s", round6(static_cast<double>(s.peak_down_at) / 1e9)},
                       {"mean", round6(s.mean_down)}};
  nlohmann::ordered_json causes = nlohmann::ordered_json::array();
  for (const auto& [cause, count] : s.causes)
    causes.push_back({{"cause", cause}, {"failures", count}});
  j["causes"] = causes;
  j["lenient_repairs"] = {{"up_without_down", repairs.up_without_down},
                          {"repeated_down", repairs.repeated_down}};
  return j.dump(2) + "\n";
}

}  // namespace recycle::traces
