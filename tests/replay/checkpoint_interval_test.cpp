// The checkpoint interval of "interval_s": "auto" (sim/replay/checkpoint_interval.hpp), by hand.
#include <doctest/doctest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "profiles/job.hpp"
#include "sim/replay/checkpoint_interval.hpp"
#include "traces/native_csv.hpp"

TEST_CASE("checkpoint interval: Daly's higher-order optimum") {
  // A 60 s write and a failure every 72 h (259,200 s): Young's sqrt(2 x 60 x 259,200) = 5,577.1 s;
  // d / 2M = 1.1574e-4, so Daly's factor is 1 + 0.010758 / 3 + 1.286e-5 = 1.0035989, and
  // 5,577.1 x 1.0035989 - 60 = 5,537.2 s.
  CHECK(recycle::sim::daly_interval(60, 259'200) == doctest::Approx(5537.17).epsilon(1e-5));
  // A write of twice the MTBF or more: checkpoint once per MTBF.
  CHECK(recycle::sim::daly_interval(100, 50) == 50);
  // Rare failures: Young's estimate less the write, to first order.
  CHECK(recycle::sim::daly_interval(1, 1e8) == doctest::Approx(std::sqrt(2e8) - 1).epsilon(1e-4));
}

TEST_CASE("checkpoint interval: auto takes the job's failure rate from the trace") {
  // 8 single-GPU nodes watched for 10,000 s with 2 failures: 2.5e-5 failures per node-second; the
  // job holds 4 of the nodes (PP 4 x DP 1, no spares given, so the trace's other 4 are spares):
  // a failure of the job's nodes every 1 / (2.5e-5 x 4) = 10,000 s, and a 50 s write.
  nlohmann::json j{{"model", "gpt3-350m"},
                   {"hardware", "a100-80g"},
                   {"parallel", {{"tp", 1}, {"pp", 4}, {"dp", 1}, {"global_batch", 4}}},
                   {"cluster", {{"nodes", 8}, {"gpus_per_node", 1}}},
                   {"checkpoint", {{"interval_s", "auto"}, {"write_s", 50}}}};
  const auto job = recycle::profiles::job_from_json(j, "job.json");
  const auto trace = recycle::traces::parse_native_csv(
                         "# nodes: 8\n# duration_s: 10000\ntime_s,node,event,cause\n"
                         "0,7,down,x\n100,1,down,x\n5000,6,down,x\n",
                         "trace.csv", {})
                         .trace;
  const auto interval =
      recycle::sim::checkpoint_interval(job, trace, 10'000 * recycle::kNanosPerSecond, 1);
  // Node 7 down at time 0 was down before the observation: not a failure.
  CHECK(interval.seconds == doctest::Approx(recycle::sim::daly_interval(50, 10'000)));
  CHECK(interval.source.find("auto: Daly") == 0);
  // No failure: one checkpoint a day.
  const auto quiet = recycle::traces::parse_native_csv(
                         "# nodes: 8\n# duration_s: 10000\ntime_s,node,event,cause\n", "t.csv", {})
                         .trace;
  CHECK(
      recycle::sim::checkpoint_interval(job, quiet, 10'000 * recycle::kNanosPerSecond, 1).seconds ==
      86'400);
  // The job file's own number when it gives one.
  j["checkpoint"]["interval_s"] = 1234;
  const auto fixed = recycle::profiles::job_from_json(j, "job.json");
  CHECK(recycle::sim::checkpoint_interval(fixed, trace, 10'000 * recycle::kNanosPerSecond, 1)
            .seconds == 1234);
  j["checkpoint"]["interval_s"] = "often";
  CHECK_THROWS_WITH(recycle::profiles::job_from_json(j, "job.json"),
                    doctest::Contains("checkpoint.interval_s: expected seconds or \"auto\""));
}
