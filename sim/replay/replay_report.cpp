#include "sim/replay/replay_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/svg_gantt.hpp"
#include "traces/trace.hpp"

namespace recycle::sim {

namespace {

double fault_free_throughput(const ReplayResult& r) {
  return r.samples_per_iteration / to_seconds(r.fault_free_iteration);
}

const PolicyResult* find(const ReplayResult& r, PolicyKind kind) {
  for (const PolicyResult& p : r.policies) {
    if (p.policy == kind) return &p;
  }
  return nullptr;
}

/// Mean samples / s of a step function over [from, to).
double mean_rate(const std::vector<RatePoint>& points, Nanos from, Nanos to, double batch) {
  double area = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Nanos a = std::max(points[i].time, from);
    const Nanos b = std::min(i + 1 < points.size() ? points[i + 1].time : to, to);
    if (b > a) area += points[i].iterations_per_s * to_seconds(b - a);
  }
  return area * batch / to_seconds(to - from);
}

const char* color(PolicyKind kind) {
  switch (kind) {
    case PolicyKind::kRecycle:
      return "#e15759";
    case PolicyKind::kCheckpoint:
      return "#4e79a7";
    case PolicyKind::kElastic:
      return "#59a14f";
    case PolicyKind::kOobleck:
      return "#f28e2b";
    case PolicyKind::kBamboo:
      return "#b07aa1";
    case PolicyKind::kAdaptive:
      return "#76b7b2";
  }
  return "#000000";
}

}  // namespace

std::string outrun_line(const ReplayResult& r) {
  if (!r.outrun) return {};
  const AdaptiveOutrun& o = *r.outrun;
  return fmt::format(
      "note: ReCycle's adaptive plan for {} failed worker{} runs at {:.4g} s, faster than "
      "fault-free {} at {:.4g} s, and is charged {:.4g} s: a schedule with fewer bubbles (a "
      "zero-bubble one) would speed up every policy",
      o.failed_workers, o.failed_workers == 1 ? "" : "s", to_seconds(o.plan), r.schedule,
      to_seconds(o.fault_free), to_seconds(o.fault_free));
}

// Counts and rates in fixed notation, as the ratios and lost hours: samples to a tenth (13 digits
// before the point fill the column), samples/s to a thousandth, GPU-hours to a hundredth.
std::string replay_table(const ReplayResult& r, const std::string& title) {
  const double days = to_seconds(r.duration) / traces::kSecondsPerDay;
  std::string out = fmt::format(
      "{}: {:.4g} days on {} nodes ({} GPUs); fault-free iteration {:.4g} s, {:.3f} samples/s; {} "
      "configurations timed{}\n",
      title, days, r.cluster_nodes, r.gpus, to_seconds(r.fault_free_iteration),
      fault_free_throughput(r), r.configurations,
      r.from_table > 0 ? fmt::format(" ({} from the step table)", r.from_table) : "");
  out += fmt::format(
      "baseline: every policy runs the job's schedule, {}, and is measured against it fault-free "
      "({:.4g} s an iteration)\n",
      r.schedule, to_seconds(r.fault_free_iteration));
  for (const std::string& charge : r.charges) out += "charges: " + charge + "\n";
  if (r.outrun) out += outrun_line(r) + "\n";
  out += fmt::format(
      "{:<11} {:>13} {:>10} {:>8} {:>6} {:>8} {:>9}  lost hours: {:>6} {:>6} {:>7} "
      "{:>7} {:>8} {:>8} {:>8} {:>7}\n",
      "policy", "samples", "samples/s", "goodput", "ettr", "failures", "restarts", "detect", "redo",
      "restart", "repair", "degraded", "reconfig", "redundant", "ckpt");
  for (const PolicyResult& p : r.policies) {
    if (!p.unfit.empty()) {
      out += fmt::format("{:<11} cannot run: {}\n", to_string(p.policy), p.unfit);
      continue;
    }
    const auto h = [&](LostCause c) {
      return p.lost_s[static_cast<std::size_t>(c)] / traces::kSecondsPerHour;
    };
    out += fmt::format(
        "{:<11} {:>13.1f} {:>10.3f} {:>8.4f} {:>6.4f} {:>8} {:>9}              {:>6.1f} {:>6.1f} "
        "{:>7.1f} {:>7.1f} {:>8.1f} {:>8.1f} {:>8.1f} {:>7.1f}\n",
        to_string(p.policy), p.samples, p.mean_throughput, p.goodput, p.ettr, p.failures,
        p.fallbacks, h(LostCause::kDetection), h(LostCause::kRedo), h(LostCause::kRestart),
        h(LostCause::kRepairWait), h(LostCause::kDegraded), h(LostCause::kReconfiguration),
        h(LostCause::kRedundancy), h(LostCause::kCheckpoint));
  }
  if (const PolicyResult* recycle = find(r, PolicyKind::kRecycle);
      recycle && recycle->unfit.empty()) {
    std::string ratios;
    for (const PolicyResult& p : r.policies) {
      if (p.policy == PolicyKind::kRecycle || !p.unfit.empty()) continue;
      // Over a policy that kept no samples the ratio is undefined: n/a, as trace stats shows one.
      ratios += fmt::format("{}{} {}", ratios.empty() ? "" : ", ", to_string(p.policy),
                            p.samples > 0 ? fmt::format("{:.3f}x", recycle->samples / p.samples)
                                          : std::string("n/a"));
    }
    if (!ratios.empty()) out += "recycle's samples over: " + ratios + "\n";
  }
  for (const PolicyResult& p : r.policies) {
    if (p.actions.empty()) continue;
    std::string taken;
    for (const auto& [action, times] : p.actions) {
      taken += fmt::format("{}{} {}", taken.empty() ? "" : ", ", action, times);
    }
    out += fmt::format("{} took: {}\n", to_string(p.policy), taken);
  }
  out += fmt::format("GPU-hours (every policy, spares included): {:.2f}\n",
                     r.policies.empty() ? 0.0 : r.policies.front().gpu_hours);
  return out;
}

std::string spares_text(const SparesMatch& m) {
  const std::string own =
      m.job_spares == 0 ? "with none" : fmt::format("with the job's {}", m.job_spares);
  const auto per_thousand = [](double h) {
    return std::isfinite(h) ? fmt::format("{:.3f}", h * 1000) : std::string("n/a");
  };
  const PolicyResult& c = m.checkpoint;
  if (m.extra == 0) return "spares: no spare count tried\n";
  std::string out =
      m.matched ? fmt::format(
                      "spares: checkpoint-restart needs {} spare node{} more to match recycle's "
                      "goodput of {:.4f} {}: goodput {:.4f}\n",
                      m.extra, m.extra == 1 ? "" : "s", m.target, own, c.goodput)
      : m.saturated > 0
          ? fmt::format(
                "spares: no number of spare nodes lets checkpoint-restart match recycle's "
                "goodput of {:.4f} {}: its best is {:.4f}, with {} more; from {} more it "
                "no longer waits for repairs and loses the rest to rollbacks, restarts and "
                "writes\n",
                m.target, own, c.goodput, m.extra, m.saturated)
          : fmt::format(
                "spares: checkpoint-restart does not match recycle's goodput of {:.4f} {} "
                "with up to {} spare nodes more: its best is {:.4f}, with {} more\n",
                m.target, own, m.tried, c.goodput, m.extra);
  out += fmt::format(
      "GPU-hours per 1,000 samples: recycle {}, checkpoint-restart with {} spare node{} more {}\n",
      per_thousand(m.recycle_gpu_hours), m.extra, m.extra == 1 ? "" : "s",
      per_thousand(m.checkpoint_gpu_hours));
  return out;
}

nlohmann::ordered_json spares_json(const SparesMatch& m) {
  const auto finite = [](double x) {
    return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr);
  };
  return {{"recycle_goodput", m.target},
          {"job_spares", m.job_spares},
          {"checkpoint_extra_spares", m.extra},
          {"matched", m.matched},
          {"checkpoint_no_repair_wait_from", m.saturated},
          {"extra_spares_tried", m.tried},
          {"checkpoint_goodput", m.checkpoint.goodput},
          {"recycle_gpu_hours_per_sample", finite(m.recycle_gpu_hours)},
          {"checkpoint_gpu_hours_per_sample", finite(m.checkpoint_gpu_hours)}};
}

nlohmann::ordered_json replay_json(const ReplayResult& r) {
  nlohmann::ordered_json j;
  j["duration_s"] = to_seconds(r.duration);
  j["cluster_nodes"] = r.cluster_nodes;
  j["gpus"] = r.gpus;
  j["samples_per_iteration"] = r.samples_per_iteration;
  j["fault_free_iteration_s"] = to_seconds(r.fault_free_iteration);
  j["baseline_schedule"] = r.schedule;
  j["checkpoint_interval_s"] = r.checkpoint_interval_s;
  j["charges"] = r.charges;
  if (r.outrun) {
    j["adaptive_outrun"] = {{"failed_workers", r.outrun->failed_workers},
                            {"plan_iteration_s", to_seconds(r.outrun->plan)},
                            {"fault_free_iteration_s", to_seconds(r.outrun->fault_free)}};
  } else {
    j["adaptive_outrun"] = nullptr;
  }
  j["fault_free_throughput_samples_per_s"] = fault_free_throughput(r);
  j["configurations"] = r.configurations;
  j["configurations_from_table"] = r.from_table;
  j["policies"] = nlohmann::ordered_json::array();
  for (const PolicyResult& p : r.policies) {
    nlohmann::ordered_json lost;
    for (std::size_t c = 0; c < kLostCauses; ++c) {
      lost[std::string(to_string(static_cast<LostCause>(c)))] = p.lost_s[c];
    }
    j["policies"].push_back({{"policy", to_string(p.policy)},
                             {"samples", p.samples},
                             {"goodput", p.goodput},
                             {"ettr", p.ettr},
                             {"mean_throughput_samples_per_s", p.mean_throughput},
                             {"lost_s", lost},
                             {"gpu_hours", p.gpu_hours},
                             {"failures", p.failures},
                             {"restarts_from_checkpoint", p.fallbacks}});
    if (!p.unfit.empty()) j["policies"].back()["unfit"] = p.unfit;
    if (!p.actions.empty()) {
      nlohmann::ordered_json taken;
      for (const auto& [action, times] : p.actions) taken[action] = times;
      j["policies"].back()["actions"] = taken;
    }
  }
  return j;
}

std::string replay_timeline_csv(const ReplayResult& r) {
  std::string out = "time_s,policy,samples_per_s\n";
  for (const PolicyResult& p : r.policies) {
    for (const RatePoint& point : p.timeline) {
      out += fmt::format("{:.3f},{},{:.6g}\n", to_seconds(point.time), to_string(p.policy),
                         point.iterations_per_s * r.samples_per_iteration);
    }
  }
  return out;
}

std::string replay_svg(const ReplayResult& r, const std::string& title) {
  constexpr double kLeft = 80, kTop = 56, kWidth = 1000, kHeight = 360, kBottom = 48;
  const double days = to_seconds(r.duration) / traces::kSecondsPerDay;
  // Bins of an hour for up to 40 days, longer beyond, so a chart has at most ~1,000 points.
  const Nanos hour = 3'600 * kNanosPerSecond;
  const Nanos bin = std::max<Nanos>(hour, (r.duration / 960 + hour - 1) / hour * hour);
  // A round step (1, 2 or 5 x 10^k) for five to ten grid lines up to 10 % above fault-free.
  const double raw = fault_free_throughput(r) * 1.1 / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw <= magnitude       ? magnitude
                      : raw <= 2 * magnitude ? 2 * magnitude
                      : raw <= 5 * magnitude ? 5 * magnitude
                                             : 10 * magnitude;
  const int lines = static_cast<int>(std::ceil(fault_free_throughput(r) * 1.1 / step));
  const double top = step * lines;
  const auto x = [&](Nanos t) { return kLeft + kWidth * to_seconds(t) / to_seconds(r.duration); };
  const auto y = [&](double rate) { return kTop + kHeight * (1 - rate / top); };
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n<text x=\"{:.0f}\" y=\"22\" font-size=\"15\">{}</text>\n",
      kLeft + kWidth + 24, kTop + kHeight + kBottom, kLeft, xml_escape(title));
  // Axes, grid and labels.
  for (int i = 0; i <= lines; ++i) {
    const double rate = step * i;
    out += fmt::format(
        "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#dddddd\"/>\n"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:.4g}</text>\n",
        kLeft, kLeft + kWidth, y(rate), y(rate), kLeft - 6, y(rate) + 4, rate);
  }
  const int ticks = static_cast<int>(std::min(10.0, std::max(1.0, std::floor(days))));
  for (int i = 0; i <= ticks; ++i) {
    const auto t = static_cast<Nanos>(static_cast<double>(r.duration) * i / ticks);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:.3g}</text>\n",
                       x(t), kTop + kHeight + 18, to_seconds(t) / traces::kSecondsPerDay);
  }
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">days ({} bins)</text>\n"
      "<text x=\"16\" y=\"{:.1f}\" transform=\"rotate(-90 16 {:.1f})\" "
      "text-anchor=\"middle\">samples / s</text>\n",
      kLeft + kWidth / 2, kTop + kHeight + 38,
      bin == hour ? std::string("hourly") : fmt::format("{:g} h", to_seconds(bin) / 3600),
      kTop + kHeight / 2, kTop + kHeight / 2);
  // Fault-free reference and one line per policy.
  const double ff = fault_free_throughput(r);
  out += fmt::format(
      "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#888888\" "
      "stroke-dasharray=\"4 3\"/>\n",
      kLeft, kLeft + kWidth, y(ff), y(ff));
  double legend = kLeft;
  for (const PolicyResult& p : r.policies) {
    if (!p.unfit.empty()) continue;
    std::string points;
    for (Nanos from = 0; from < r.duration; from += bin) {
      const Nanos to = std::min(from + bin, r.duration);
      const double rate = mean_rate(p.timeline, from, to, r.samples_per_iteration);
      points += fmt::format("{:.1f},{:.1f} ", x(from + (to - from) / 2), y(rate));
    }
    out += fmt::format(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"{} points=\"{}\"/>\n"
        "<rect x=\"{:.1f}\" y=\"34\" width=\"14\" height=\"4\" fill=\"{}\"/>\n"
        "<text x=\"{:.1f}\" y=\"40\">{}</text>\n",
        color(p.policy),
        // Adaptive often runs as one of the others: dashed, so the line under it shows.
        p.policy == PolicyKind::kAdaptive ? " stroke-dasharray=\"6 4\"" : "", points, legend,
        color(p.policy), legend + 18, to_string(p.policy));
    legend += 110;
  }
  out +=
      fmt::format("<text x=\"{:.1f}\" y=\"40\" fill=\"#666666\">- - fault-free</text>\n", legend);
  out += "</svg>\n";
  return out;
}

}  // namespace recycle::sim
