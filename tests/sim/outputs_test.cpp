// What the simulator writes: the JSON report, the Chrome trace (checked against the trace event
// format), the SVG Gantt chart, and byte-for-byte determinism. Also a re-routed schedule, whose
// contention on the receiver's communication stream is worked out by hand.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "planner/generators.hpp"
#include "sim/chrome_trace.hpp"
#include "sim/metrics.hpp"
#include "sim/report.hpp"
#include "sim/simulator.hpp"
#include "sim/svg_gantt.hpp"

namespace {

using namespace recycle;
using planner::Action;
using planner::ActionType;
using planner::CostModel;
using planner::Layout;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// ZB-H1, dp 2 x pp 4, m 8, on a network: 1 ms F, I, W; 1 MB sends over 10 GB/s.
sim::SimRun zb_h1_run(std::int32_t iterations = 3) {
  const Layout layout{2, 4, 8, 1};
  planner::GeneratorOptions gen;
  gen.layout = layout;
  CostModel model =
      CostModel::compute_only(planner::Costs::uniform(4, {1'000'000, 1'000'000, 1'000'000}));
  model.output_bytes.assign(4, 1'000'000);
  model.param_bytes.assign(4, 10'000'000);
  profiles::HardwareSpec hw;
  hw.gpus_per_node = 8;
  hw.intra_node_bandwidth = hw.inter_node_bandwidth = 1e10;
  model.cluster = planner::Cluster(hw, 8, 4);
  return sim::simulate(planner::generate_fault_free("zb-h1", gen), model,
                       {.iterations = iterations});
}

/// dp 2 x pp 2, one micro-batch, worker (1,1) failed: pipeline 1's micro-batch runs stage 1 on
/// (0,1). F = 1000 ns, B = 2000 ns, 500-byte sends at 1 byte/ns (500 ns).
sim::SimRun rerouted_run() {
  planner::Schedule s;
  s.generator = "hand";
  s.layout = Layout{2, 2, 1, 1};
  s.failed = {{1, 1}};
  s.routes = {planner::Route{1, 1, 0, 0}};
  const auto act = [](ActionType t, std::int32_t vs, std::int32_t owner) {
    return Action{t, vs, 0, owner};
  };
  s.workers = {
      {{0, 0}, {act(ActionType::kForward, 0, 0), act(ActionType::kBackward, 0, 0)}},
      {{0, 1},
       {act(ActionType::kForward, 1, 0), act(ActionType::kForward, 1, 1),
        act(ActionType::kBackward, 1, 0), act(ActionType::kBackward, 1, 1)}},
      {{1, 0}, {act(ActionType::kForward, 0, 1), act(ActionType::kBackward, 0, 1)}},
  };
  CostModel model = CostModel::compute_only(planner::Costs::uniform(2, {1000, 1000, 1000}));
  model.output_bytes = {500, 500};
  profiles::HardwareSpec hw;
  hw.gpus_per_node = 1;
  hw.intra_node_bandwidth = hw.inter_node_bandwidth = 1e9;
  model.cluster = planner::Cluster(hw, 1, 2);
  return sim::simulate(s, model, {.iterations = 1});
}

}  // namespace

TEST_CASE("a re-routed micro-batch shares the peer's communication stream, in list order") {
  const auto run = rerouted_run();
  const auto& x = run.timeline.transfers;
  REQUIRE(x.size() == 4);
  // Lowered, (0,1) posts RECV_F0 then RECV_F0@1 (both activations are made at 1000; ties go to
  // the lower sender) before F0. Transfers are recorded in the order of their SENDs' workers:
  // (0,0)'s SEND_F0, (0,1)'s SEND_B0 and SEND_B0@1, (1,0)'s SEND_F0@1.
  // (0,0)'s activation runs 1000-1500; (1,0)'s waits on (0,1)'s stream for it: 1500-2000.
  CHECK(x[0].start == 1000);
  CHECK(x[0].end == 1500);
  CHECK(x[3].from == 2);
  CHECK(x[3].start == 1500);
  CHECK(x[3].end == 2000);
  // (0,1): F0 1500-2500, F0@1 2500-3500, B0 3500-5500 (gradient to (0,0) 5500-6000), B0@1
  // 5500-7500 (gradient to (1,0) 7500-8000); (1,0)'s B 8000-10000, the last action before OPT.
  CHECK(x[1].start == 5500);
  CHECK(x[2].start == 7500);
  const auto m = sim::compute_metrics(run);
  CHECK(m.iteration_time == 10'000);
  CHECK(m.microbatches_per_iteration == 2);  // both pipelines' micro-batches are trained
  CHECK(m.workers[1].busy == 2 * (1000 + 2000));
  CHECK(sim::chrome_trace(run).find("\"rerouted\":true") != std::string::npos);
  CHECK(count(sim::svg_gantt(run, m), "fill=\"url(#rerouted)\"") == 2 + 1);  // F0@1, B0@1, legend
}

TEST_CASE("the JSON report carries every documented field") {
  const auto run = zb_h1_run();
  const auto m = sim::compute_metrics(run, 4);
  const auto j = sim::report_json(run, m);
  CHECK(j["format"] == "recycle.simulation/1");
  CHECK(j["iterations"] == 3);
  CHECK(j["iteration_time_s"].get<double>() == to_seconds(m.iteration_time));
  CHECK(j["samples_per_iteration"] == 2 * 8 * 4);
  CHECK(j["throughput_samples_per_s"].get<double>() == m.throughput);
  CHECK(j["bubble_fraction"].get<double>() == m.bubble_fraction);
  REQUIRE(j["workers"].size() == 8);
  for (const auto& w : j["workers"]) {
    for (const char* key :
         {"dp", "stage", "busy_s", "peak_inflight_microbatches", "peak_activation_bytes"}) {
      CHECK(w.contains(key));
    }
  }
  CHECK(j["critical_path"]["length_s"].get<double>() == to_seconds(m.critical_path_length));
  CHECK(j["critical_path"]["steps"].size() == m.critical_path.size());
  CHECK(sim::report_table(run, m).find("bubble fraction") != std::string::npos);
}

TEST_CASE("the Chrome trace follows the trace event format") {
  const auto run = zb_h1_run();
  const auto trace = nlohmann::json::parse(sim::chrome_trace(run));
  REQUIRE(trace.contains("traceEvents"));
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::pair<double, double>>> tracks;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names;
  std::size_t compute = 0;
  for (const auto& e : trace["traceEvents"]) {
    REQUIRE(e["ph"].is_string());
    REQUIRE(e["pid"].is_number_integer());
    REQUIRE(e["tid"].is_number_integer());
    REQUIRE(e["name"].is_string());
    const std::pair key{e["pid"].get<std::int64_t>(), e["tid"].get<std::int64_t>()};
    if (e["ph"] == "M") {
      if (e["name"] == "thread_name") thread_names[key] = e["args"]["name"];
      continue;
    }
    REQUIRE(e["ph"] == "X");
    REQUIRE(e["ts"].is_number());
    REQUIRE(e["dur"].is_number());
    CHECK(e["dur"].get<double>() > 0);
    tracks[key].emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
    if (e["tid"] == 1) ++compute;
  }
  // Every track of a slice is named; slices on one track never overlap (complete events must nest).
  for (auto& [key, slices] : tracks) {
    CHECK(thread_names.count(key) == 1);
    std::sort(slices.begin(), slices.end());
    for (std::size_t i = 1; i < slices.size(); ++i)
      CHECK(slices[i].first >= slices[i - 1].second - 1e-9);
  }
  // One slice per F, I, W: 8 workers x 8 micro-batches x 3 x 3 iterations (OPT costs nothing here).
  CHECK(compute == 8 * 8 * 3 * 3);
  // Microseconds: worker (0,0)'s first F runs 0 to 1 ms: ts 0, dur 1000.
  const auto first =
      std::find_if(trace["traceEvents"].begin(), trace["traceEvents"].end(),
                   [](const auto& e) { return e["ph"] == "X" && e["pid"] == 1 && e["tid"] == 1; });
  CHECK((*first)["name"] == "0F0");
  CHECK((*first)["ts"].get<double>() == 0.0);
  CHECK((*first)["dur"].get<double>() == 1000.0);
  // Restricted to the last iteration: a third of the compute slices, all after iteration 2 ended.
  const auto last = nlohmann::json::parse(sim::chrome_trace(run, 2));
  std::size_t last_compute = 0;
  for (const auto& e : last["traceEvents"]) {
    if (e["ph"] != "X") continue;
    CHECK(e["ts"].get<double>() * 1000.0 >=
          static_cast<double>(run.timeline.iteration_ends[1]) - 1e-6);
    if (e["tid"] == 1) ++last_compute;
  }
  CHECK(last_compute == 8 * 8 * 3);
}

TEST_CASE("the SVG Gantt chart draws one box per compute action") {
  const auto run = zb_h1_run(2);
  const auto m = sim::compute_metrics(run);
  const std::string svg = sim::svg_gantt(run, m);
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find("</svg>") == svg.size() - 7);
  // Tooltips: one per box; 8 workers x 24 actions x 2 iterations.
  CHECK(count(svg, "<title>") == 8 * 24 * 2);
  CHECK(count(svg, "end of iteration") == 2);
  CHECK(count(sim::svg_gantt(run, m, 1), "<title>") == 8 * 24);
}

TEST_CASE("the same inputs give the same bytes") {
  const auto a = zb_h1_run();
  const auto b = zb_h1_run();
  const auto ma = sim::compute_metrics(a);
  const auto mb = sim::compute_metrics(b);
  CHECK(sim::report_json(a, ma).dump(2) == sim::report_json(b, mb).dump(2));
  CHECK(sim::report_table(a, ma) == sim::report_table(b, mb));
  CHECK(sim::chrome_trace(a) == sim::chrome_trace(b));
  CHECK(sim::svg_gantt(a, ma) == sim::svg_gantt(b, mb));
}

TEST_CASE("format_duration picks a readable unit") {
  CHECK(sim::format_duration(0) == "0 s");
  CHECK(sim::format_duration(850) == "850 ns");
  CHECK(sim::format_duration(12'500'000) == "12.5 ms");
  CHECK(sim::format_duration(3 * kNanosPerSecond) == "3 s");
}

TEST_CASE("xml_escape writes only characters XML 1.0 allows") {
  using namespace std::string_literals;
  CHECK(sim::xml_escape("a<b>&\"c\"") == "a&lt;b&gt;&amp;&quot;c&quot;");
  CHECK(sim::xml_escape("tab\tnew\nline") == "tab\tnew\nline");
  // A control byte, a lone continuation byte, a truncated sequence and an overlong '/' each
  // become U+FFFD (EF BF BD); well-formed multi-byte characters pass as they are.
  CHECK(sim::xml_escape("a\x01"s + "b") ==
        "a\xEF\xBF\xBD"
        "b");
  CHECK(sim::xml_escape("\x80") == "\xEF\xBF\xBD");
  CHECK(sim::xml_escape("x\xE2\x82") == "x\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(sim::xml_escape("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(sim::xml_escape("\xE2\x82\xAC \xF0\x9F\x98\x80") == "\xE2\x82\xAC \xF0\x9F\x98\x80");
  CHECK(sim::xml_escape("\xEF\xBF\xBE") == "\xEF\xBF\xBD");
}
