#include "sim/svg_gantt.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/report.hpp"

namespace recycle::sim {

namespace {

using planner::Action;
using planner::ActionType;

constexpr double kLeft = 96;  // label column
constexpr double kPlotWidth = 1200;
constexpr double kRight = 24;
constexpr double kTop = 84;  // title, legend and time axis above the rows
constexpr double kRow = 24;
constexpr double kBar = 15;   // compute bar height
constexpr double kStrip = 4;  // communication strip height

struct Style {
  const char* fill;
  const char* text;
};

Style style_of(ActionType type) {
  switch (type) {
    case ActionType::kForward:
      return {"#4e79a7", "#ffffff"};
    case ActionType::kBackwardInput:
      return {"#59a14f", "#ffffff"};
    case ActionType::kBackwardWeight:
      return {"#edc948", "#000000"};
    case ActionType::kBackward:
      return {"#2f8f89", "#ffffff"};
    case ActionType::kOptimizer:
      return {"#9c755f", "#ffffff"};
    default:
      return {"#bab0ac", "#000000"};
  }
}
constexpr const char* kTransferFill = "#9d9d9d";
constexpr const char* kAllReduceFill = "#b07aa1";
constexpr const char* kReroutedStroke = "#e15759";

/// 1, 2 or 5 times a power of ten, near span / 10.
Nanos tick_step(Nanos span) {
  const double raw = std::max(1.0, static_cast<double>(span) / 10.0);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) return std::max<Nanos>(1, static_cast<Nanos>(std::llround(m * power)));
  }
  return static_cast<Nanos>(10 * power);
}

class Chart {
 public:
  Chart(const SimRun& run, std::optional<std::int32_t> iteration)
      : run_(run), iteration_(iteration) {
    const Timeline& t = run.timeline;
    t0_ = iteration ? std::numeric_limits<Nanos>::max() : 0;
    t1_ = 0;
    for (std::size_t w = 0; w < t.workers(); ++w) {
      for (std::int32_t i = 0; i < t.iterations; ++i) {
        if (!wanted(i)) continue;
        t0_ = std::min(t0_, t.at(w, i, 0).start);
        t1_ = std::max(t1_, t.at(w, i, t.list_size(w) - 1).end);
      }
    }
    scale_ = kPlotWidth / static_cast<double>(std::max<Nanos>(1, t1_ - t0_));
  }

  [[nodiscard]] bool wanted(std::int32_t i) const noexcept {
    return !iteration_ || *iteration_ == i;
  }
  [[nodiscard]] double x(Nanos t) const noexcept {
    return kLeft + static_cast<double>(t - t0_) * scale_;
  }
  [[nodiscard]] double width(Nanos start, Nanos end) const noexcept {
    return std::max(0.6, static_cast<double>(end - start) * scale_);
  }
  [[nodiscard]] double row_y(std::size_t w) const noexcept {
    return kTop + static_cast<double>(w) * kRow;
  }

  std::string render(const Metrics& m) {
    const Timeline& t = run_.timeline;
    const double height = kTop + static_cast<double>(t.workers()) * kRow + 24;
    const double total_width = kLeft + kPlotWidth + kRight;
    out_ += fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
        "viewBox=\"0 0 {0:.0f} {1:.0f}\" "
        "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
        total_width, height);
    out_ +=
        "<defs><pattern id=\"rerouted\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><rect width=\"3\" height=\"6\" fill=\"#ffffff\" "
        "fill-opacity=\"0.45\"/>"
        "</pattern></defs>\n";
    out_ += fmt::format("<rect width=\"{:.0f}\" height=\"{:.0f}\" fill=\"#ffffff\"/>\n",
                        total_width, height);
    header(m);
    axis();
    for (std::size_t w = 0; w < t.workers(); ++w) row(w);
    transfers();
    collectives();
    iteration_marks();
    out_ += "</svg>\n";
    return std::move(out_);
  }

 private:
  void header(const Metrics& m) {
    const std::string scope = iteration_
                                  ? fmt::format("iteration {} of {}", *iteration_ + 1, m.iterations)
                                  : fmt::format("{} iterations", m.iterations);
    out_ += fmt::format(
        "<text x=\"{}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}: {} ({})</text>\n", kLeft,
        xml_escape(run_.schedule.generator), xml_escape(describe_layout(run_.schedule)), scope);
    out_ += fmt::format(
        "<text x=\"{}\" y=\"38\" font-size=\"12\">iteration time {}, throughput {:.6g} samples/s, "
        "bubble fraction "
        "{:.4f}, {} optimizer</text>\n",
        kLeft, format_duration(m.iteration_time), m.throughput, m.bubble_fraction,
        optimizer_name(run_));
    double lx = kLeft;
    const auto legend = [&](const char* fill, const char* label, bool hatched) {
      out_ += fmt::format("<rect x=\"{:.1f}\" y=\"46\" width=\"14\" height=\"10\" fill=\"{}\"", lx,
                          fill);
      out_ +=
          hatched ? fmt::format(" stroke=\"{}\" stroke-width=\"1.5\"/>", kReroutedStroke) : "/>";
      if (hatched)
        out_ += fmt::format(
            "<rect x=\"{:.1f}\" y=\"46\" width=\"14\" height=\"10\" fill=\"url(#rerouted)\"/>", lx);
      out_ +=
          fmt::format("<text x=\"{:.1f}\" y=\"55\" font-size=\"11\">{}</text>\n", lx + 18, label);
      lx += 26 + 6.2 * static_cast<double>(std::string_view(label).size());
    };
    legend(style_of(ActionType::kForward).fill, "F forward", false);
    legend(style_of(ActionType::kBackwardInput).fill, "I input grad", false);
    legend(style_of(ActionType::kBackwardWeight).fill, "W weight grad", false);
    legend(style_of(ActionType::kBackward).fill, "B backward", false);
    legend(style_of(ActionType::kOptimizer).fill, "OPT", false);
    legend(kTransferFill, "transfer (sender)", false);
    legend(kAllReduceFill, "all-reduce", false);
    legend(style_of(ActionType::kForward).fill, "re-routed", true);
  }

  void axis() {
    const Nanos step = tick_step(t1_ - t0_);
    const double bottom = kTop + static_cast<double>(run_.timeline.workers()) * kRow;
    for (Nanos tick = (t0_ + step - 1) / step * step; tick <= t1_; tick += step) {
      const double tx = x(tick);
      out_ += fmt::format(
          "<line x1=\"{0:.2f}\" y1=\"{1:.0f}\" x2=\"{0:.2f}\" y2=\"{2:.0f}\" stroke=\"#e4e4e4\"/>",
          tx, kTop - 6, bottom);
      out_ += fmt::format(
          "<text x=\"{:.2f}\" y=\"{:.0f}\" font-size=\"10\" text-anchor=\"middle\">{}</text>\n", tx,
          kTop - 10, format_duration(tick));
    }
  }

  void row(std::size_t w) {
    const Timeline& t = run_.timeline;
    const planner::WorkerSchedule& ws = run_.schedule.workers[w];
    const double y = row_y(w);
    if (w > 0 && run_.schedule.workers[w - 1].id.dp != ws.id.dp) {
      out_ += fmt::format(
          "<line x1=\"4\" y1=\"{0:.1f}\" x2=\"{1:.0f}\" y2=\"{0:.1f}\" stroke=\"#888888\"/>\n", y,
          kLeft + kPlotWidth);
    }
    out_ += fmt::format("<text x=\"6\" y=\"{:.1f}\" font-size=\"11\">{}</text>\n", y + 13,
                        planner::to_string(ws.id));
    for (std::int32_t i = 0; i < t.iterations; ++i) {
      if (!wanted(i)) continue;
      for (std::size_t pc = 0; pc < ws.actions.size(); ++pc) {
        const Action& a = ws.actions[pc];
        const ActionRecord& r = t.at(w, i, pc);
        if (!(planner::is_compute(a.type) || a.type == ActionType::kOptimizer) || r.end == r.start)
          continue;
        box(ws, a, r, y + 2);
      }
    }
  }

  void box(const planner::WorkerSchedule& ws, const Action& a, const ActionRecord& r, double y) {
    const Style s = style_of(a.type);
    const std::string token = planner::to_token(a, ws.id.dp);
    const bool rerouted = a.owner >= 0 && a.owner != ws.id.dp;
    const double bx = x(r.start);
    const double bw = width(r.start, r.end);
    out_ +=
        fmt::format("<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\"",
                    bx, y, bw, kBar, s.fill);
    out_ += rerouted ? fmt::format(" stroke=\"{}\" stroke-width=\"1.5\">", kReroutedStroke)
                     : std::string(" stroke=\"#ffffff\" stroke-width=\"0.5\">");
    out_ +=
        fmt::format("<title>{} on {}: {} to {}</title></rect>", token, planner::to_string(ws.id),
                    format_duration(r.start), format_duration(r.end));
    if (rerouted) {
      out_ += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\" "
          "fill=\"url(#rerouted)\"/>",
          bx, y, bw, kBar);
    }
    // Label without the virtual stage when it is the row's own stage: "F3", "W5@1".
    const std::string label = a.virtual_stage == ws.id.stage
                                  ? token.substr(std::to_string(a.virtual_stage).size())
                                  : token;
    if (bw >= 6.2 * static_cast<double>(label.size()) + 2) {
      out_ += fmt::format(
          "<text x=\"{:.2f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"middle\" "
          "fill=\"{}\">{}</text>",
          bx + bw / 2, y + 11, s.text, label);
    }
    out_ += "\n";
  }

  void transfers() {
    for (const TransferRecord& xr : run_.timeline.transfers) {
      if (!wanted(xr.iteration) || xr.end == xr.start) continue;
      const double y = row_y(static_cast<std::size_t>(xr.from)) + 3 + kBar;
      out_ += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\"/>\n",
          x(xr.start), y, width(xr.start, xr.end), kStrip, kTransferFill);
    }
  }

  void collectives() {
    const Timeline& t = run_.timeline;
    for (const CollectiveRecord& c : t.collectives) {
      if (!wanted(c.iteration) || c.end == c.start) continue;
      for (std::size_t w = 0; w < t.workers(); ++w) {
        if (run_.schedule.workers[w].id.stage != c.stage) continue;
        out_ += fmt::format(
            "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\"/>\n",
            x(c.start), row_y(w) + 3 + kBar, width(c.start, c.end), kStrip, kAllReduceFill);
      }
    }
  }

  void iteration_marks() {
    const Timeline& t = run_.timeline;
    const double bottom = kTop + static_cast<double>(t.workers()) * kRow;
    for (std::int32_t i = 0; i < t.iterations; ++i) {
      const Nanos end = t.iteration_ends[static_cast<std::size_t>(i)];
      if (!wanted(i) || end < t0_ || end > t1_) continue;
      out_ += fmt::format(
          "<line x1=\"{0:.2f}\" y1=\"{1:.0f}\" x2=\"{0:.2f}\" y2=\"{2:.0f}\" stroke=\"#d62728\" "
          "stroke-dasharray=\"4 3\"/>"
          "<text x=\"{3:.2f}\" y=\"{4:.0f}\" font-size=\"10\" fill=\"#d62728\" "
          "text-anchor=\"end\">end of iteration {5}"
          "</text>\n",
          x(end), kTop - 4, bottom, x(end) - 3, bottom + 14, i + 1);
    }
  }

  const SimRun& run_;
  std::optional<std::int32_t> iteration_;
  Nanos t0_ = 0;
  Nanos t1_ = 0;
  double scale_ = 1;
  std::string out_;
};

}  // namespace

namespace {

/// The length of the well-formed UTF-8 sequence at the start of `t`, 0 when there is none.
std::size_t utf8_length(std::string_view t) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(t[i]); };
  const auto tail = [&](std::size_t i) { return i < t.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return tail(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!tail(1) || !tail(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // a surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!tail(1) || !tail(2) || !tail(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    const std::size_t n = utf8_length(text.substr(i));
    // XML 1.0 has no control character but tab, newline and carriage return, and only
    // well-formed UTF-8: anything else (a job name's control byte) becomes U+FFFD.
    const bool control =
        (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
    const bool nonchar = n == 3 && text.substr(i, 2) == "\xEF\xBF" &&
                         static_cast<unsigned char>(text[i + 2]) >= 0xBE;  // U+FFFE, U+FFFF
    if (n == 0 || control || nonchar) {
      out += "\xEF\xBF\xBD";
      i += n == 0 ? 1 : n;
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string svg_gantt(const SimRun& run, const Metrics& metrics,
                      std::optional<std::int32_t> iteration) {
  return Chart(run, iteration).render(metrics);
}

}  // namespace recycle::sim
