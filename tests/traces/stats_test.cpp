// Statistics of a hand-made trace whose every number is worked out in the comments; and the same
// numbers for the InfiniteHBD trace, computed independently in Python.
#include "traces/stats.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "tests/traces/test_paths.hpp"
#include "traces/import_infinitehbd.hpp"
#include "traces/native_csv.hpp"
#include "traces/stats_report.hpp"

namespace recycle::traces {
namespace {

using testing::shared_trace;

// 4 nodes watched for 100 h (360,000 s). Times in hours:
//   0 node 3 down (initial state)   10 nodes 0 and 1 down (GPU)   12 node 0 up   20 node 1 up
//   30 node 0 down (NIC)   34 node 0 up   60 node 2 down (GPU)   61 node 3 up; node 2 stays down.
constexpr const char* kHandMade =
    "# nodes: 4\n# duration_s: 360000\n"
    "time_s,node,event,cause\n"
    "0,3,down,maintenance\n"
    "36000,0,down,GPU\n"
    "36000,1,down,GPU\n"
    "43200,0,up,\n"
    "72000,1,up,\n"
    "108000,0,down,NIC\n"
    "122400,0,up,\n"
    "216000,2,down,GPU\n"
    "219600,3,up,\n";

TraceStats hand_made() {
  return compute_stats(parse_native_csv(kHandMade, "hand.csv", {}).trace);
}

TEST_CASE("counts, rate and MTBF of the hand-made trace") {
  const TraceStats s = hand_made();
  CHECK(s.nodes == 4);
  CHECK(s.nodes_failed == 3);  // nodes 0, 1, 2 (node 3 was only down from the start)
  CHECK(s.events == 9);
  CHECK(s.failures == 4);  // at 10 h (x2), 30 h, 60 h
  CHECK(s.initially_down == 1);
  CHECK(s.down_at_end == 1);  // node 2
  // 4 failures / (4 nodes x 100/24 days) x 1000 = 240 per 1,000 node-days.
  CHECK(*s.failures_per_1000_node_days == doctest::Approx(240.0));
  CHECK(*s.mtbf_node_h == doctest::Approx(100.0));  // 4 x 100 node-hours / 4
  CHECK(*s.mtbf_cluster_h == doctest::Approx(25.0));
}

TEST_CASE("repair times of the hand-made trace") {
  // Ended outages that began after 0: 2 h (node 0), 10 h (node 1), 4 h (node 0) -> sorted {2, 4,
  // 10}. Nearest rank: p50 = 2nd (ceil 1.5), p90 = 3rd (ceil 2.7), p99 = 3rd.
  const RepairSummary r = *hand_made().repair;
  CHECK(r.count == 3);
  CHECK(r.p50_h == doctest::Approx(4.0));
  CHECK(r.p90_h == doctest::Approx(10.0));
  CHECK(r.p99_h == doctest::Approx(10.0));
  CHECK(r.mean_h == doctest::Approx(16.0 / 3));
  CHECK(r.max_h == doctest::Approx(10.0));
  CHECK(r.zero == 0);
  const double mu = std::log(80.0) / 3;  // (ln 2 + ln 4 + ln 10) / 3
  const double var = (std::pow(std::log(2.0) - mu, 2) + std::pow(std::log(4.0) - mu, 2) +
                      std::pow(std::log(10.0) - mu, 2)) /
                     3;
  CHECK(r.lognormal->mu == doctest::Approx(mu));
  CHECK(r.lognormal->sigma == doctest::Approx(std::sqrt(var)));
}

TEST_CASE("bursts, inter-arrivals and nodes down at once of the hand-made trace") {
  const TraceStats s = hand_made();
  CHECK(s.failure_instants == 3);  // 10 h (2 nodes), 30 h, 60 h
  CHECK(s.burst_sizes == std::map<std::int64_t, std::int64_t>{{1, 2}, {2, 1}});
  CHECK(s.largest_burst() == 2);
  CHECK(s.interarrival_gaps == 2);  // 20 h and 30 h
  CHECK(s.interarrival_mean_h == doctest::Approx(25.0));
  REQUIRE(s.interarrival);
  CHECK(s.node_tbf_gaps == 1);  // node 0: 10 h -> 30 h
  CHECK_FALSE(s.node_tbf);      // one gap: no fit
  // Down after each time: 0 h: 1, 10 h: 3, 12 h: 2, 20 h: 1, 30 h: 2, 34 h: 1, 60 h: 2, 61 h: 1
  // until 100 h. Integral: 1x10 + 3x2 + 2x8 + 1x10 + 2x4 + 1x26 + 2x1 + 1x39 = 117 node-hours over
  // 100 h.
  CHECK(s.peak_down == 3);
  CHECK(s.peak_down_at == 36'000 * kNanosPerSecond);
  CHECK(s.mean_down == doctest::Approx(1.17));
  CHECK(s.causes == std::vector<std::pair<std::string, std::int64_t>>{{"GPU", 3}, {"NIC", 1}});
}

TEST_CASE("the text and JSON reports carry the same numbers") {
  const TraceStats s = hand_made();
  const std::string text = format_stats_text(s, "hand.csv", {});
  CHECK(text.find("failure rate:          240.000 per 1,000 node-days") != std::string::npos);
  CHECK(text.find("3 repairs: p50 4.00 h, p90 10.00 h, p99 10.00 h, mean 5.33 h, max 10.00 h") !=
        std::string::npos);
  CHECK(text.find("3 failure instants (2 x1, 1 x2); largest 2, mean 1.333") != std::string::npos);
  CHECK(text.find("peak 3 at 0.417 days, mean 1.17") != std::string::npos);
  CHECK(text.find("      3   75.0%  GPU") != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(format_stats_json(s, "hand.csv", {2, 1}));
  CHECK(j["failures"] == 4);
  CHECK(j["failures_per_1000_node_days"] == 240.0);
  CHECK(j["repair"]["p50_h"] == 4.0);
  CHECK(j["bursts"]["sizes"]["2"] == 1);
  CHECK(j["down_at_once"]["mean"] == 1.17);
  CHECK(j["node_tbf"]["weibull"].is_null());
  CHECK(j["lenient_repairs"]["up_without_down"] == 2);
  CHECK(j["causes"][0]["cause"] == "GPU");
}

TEST_CASE("an empty trace has no rate and no fits") {
  const TraceStats s =
      compute_stats(parse_native_csv("time_s,node,event,cause\n", "e.csv", {}).trace);
  CHECK(s.failures == 0);
  CHECK_FALSE(s.failures_per_1000_node_days);
  CHECK_FALSE(s.mtbf_node_h);
  CHECK_FALSE(s.repair);
  CHECK_FALSE(s.interarrival);
  CHECK(s.peak_down == 0);
  CHECK(format_stats_text(s, "e.csv", {}).find("n/a") != std::string::npos);
}

TEST_CASE("statistics of the InfiniteHBD trace match an independent Python computation") {
  const auto path = shared_trace("infinitehbd-stepfun/fault_trace.json");
  if (!path) return testing::skip_without_trace("infinitehbd-stepfun/fault_trace.json");
  // Python (stdlib only) on fault_trace.json, outages merged per node with an open-fault counter:
  //   582 outages, 14 of length 0; lognormal of the others' hours: mu 2.7102, sigma 2.5254;
  //   repair hours by nearest rank: p50 20.390, p90 312.180, p99 2041.726, max 3143.126;
  //   528 distinct failure times -> 527 gaps; Weibull MLE by bisection on the score: k 0.6243,
  //   scale 11.2956 h; burst sizes {1: 499, 2: 19, 3: 5, 4: 2, 6: 1, 8: 2};
  //   sweep of nodes down after each time: peak 35 (day 74.0429), time-average 9.2593 over
  //   [0, 348.9798 d]; 351 gaps between failures of one node, Weibull k 0.5182, scale 504.74 h.
  //   Rate: 582 / (400 x 348.9798) x 1000 = 4.1693.
  const TraceStats s = compute_stats(read_infinitehbd(*path, {.nodes = 400}).trace);
  CHECK(s.failures == 582);
  CHECK(s.nodes_failed == 231);
  CHECK(*s.failures_per_1000_node_days == doctest::Approx(4.1693).epsilon(1e-4));
  CHECK(s.repair->count == 582);
  CHECK(s.repair->zero == 14);
  CHECK(s.repair->lognormal->mu == doctest::Approx(2.7102).epsilon(1e-4));
  CHECK(s.repair->lognormal->sigma == doctest::Approx(2.5254).epsilon(1e-4));
  CHECK(s.repair->p50_h == doctest::Approx(20.390).epsilon(1e-4));
  CHECK(s.repair->p90_h == doctest::Approx(312.180).epsilon(1e-4));
  CHECK(s.repair->p99_h == doctest::Approx(2041.726).epsilon(1e-4));
  CHECK(s.repair->max_h == doctest::Approx(3143.126).epsilon(1e-4));
  CHECK(s.failure_instants == 528);
  CHECK(s.interarrival_gaps == 527);
  CHECK(s.interarrival->shape == doctest::Approx(0.6243).epsilon(1e-3));
  CHECK(s.interarrival->scale == doctest::Approx(11.2956).epsilon(1e-3));
  CHECK(s.burst_sizes ==
        std::map<std::int64_t, std::int64_t>{{1, 499}, {2, 19}, {3, 5}, {4, 2}, {6, 1}, {8, 2}});
  CHECK(s.peak_down == 35);
  CHECK(s.mean_down == doctest::Approx(9.2593).epsilon(1e-4));
  CHECK(s.node_tbf_gaps == 351);
  CHECK(s.node_tbf->shape == doctest::Approx(0.5182).epsilon(1e-3));
}

}  // namespace
}  // namespace recycle::traces
