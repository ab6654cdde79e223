// What-if studies (sim/replay/study.hpp): the grid, shards that merge into the unsharded file byte
// for byte, and the errors.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "sim/replay/study.hpp"

namespace {

using recycle::sim::StudyOptions;

StudyOptions small_study() {
  StudyOptions o;
  o.job = nlohmann::json::parse(R"({
    "model": "gpt3-350m", "hardware": "a100-80g",
    "parallel": {"tp": 1, "pp": 4, "dp": 2, "global_batch": 16},
    "cluster": {"gpus_per_node": 1},
    "checkpoint": {"interval_s": 600, "write_s": 60, "load_s": 300}})");
  o.job_source = "job.json";
  o.axes = {recycle::sim::parse_sweep("cluster.spares=0,1,2"),
            recycle::sim::parse_sweep("rate=100,400")};
  o.policies = {recycle::sim::PolicyKind::kRecycle, recycle::sim::PolicyKind::kCheckpoint};
  o.preset = "cloud-bad";
  o.seeds = 2;
  o.days = 2;
  return o;
}

}  // namespace

TEST_CASE("study: one row per point, seed and policy: the last axis moves fastest") {
  const std::string csv = recycle::sim::run_study(small_study());
  // 3 x 2 points x 2 seeds x 2 policies = 24 rows, after the two comments and the header.
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 3 + 24);
  CHECK(csv.find("# recycle study: 6 points x 2 seeds x 2 policies (recycle,checkpoint)") == 0);
  CHECK(csv.find("\n# inputs: ") != std::string::npos);
  CHECK(csv.find("\npoint,cluster.spares,rate,seed,policy,samples,") != std::string::npos);
  CHECK(csv.find("\n0,0,100,1,recycle,") != std::string::npos);
  CHECK(csv.find("\n1,0,400,1,recycle,") != std::string::npos);
  CHECK(csv.find("\n5,2,400,2,checkpoint,") != std::string::npos);
}

TEST_CASE("study: shards merge into the unsharded file, byte for byte") {
  StudyOptions o = small_study();
  const std::string whole = recycle::sim::run_study(o);
  std::vector<std::pair<std::string, std::string>> parts;
  for (std::int64_t i = 2; i >= 0; --i) {  // in any order
    o.shard = {i, 3};
    parts.emplace_back("part" + std::to_string(i), recycle::sim::run_study(o));
  }
  CHECK(recycle::sim::merge_study(parts) == whole);
  // A missing shard and a shard given twice are errors.
  auto missing = parts;
  missing.pop_back();
  CHECK_THROWS_WITH_AS(static_cast<void>(recycle::sim::merge_study(missing)),
                       doctest::Contains("a shard is missing"), recycle::InputError);
  auto twice = parts;
  twice.push_back(parts.front());
  CHECK_THROWS_WITH_AS(static_cast<void>(recycle::sim::merge_study(twice)),
                       doctest::Contains("in another file too"), recycle::InputError);
  // A shard of another grid of the same shape (other spare counts) is another study.
  StudyOptions other = small_study();
  other.axes.front() = recycle::sim::parse_sweep("cluster.spares=0,1,3");
  other.shard = {0, 3};
  auto mixed = parts;
  mixed.back() = {"other0", recycle::sim::run_study(other)};
  CHECK_THROWS_WITH_AS(static_cast<void>(recycle::sim::merge_study(mixed)),
                       doctest::Contains("other0: a different study"), recycle::InputError);
  // A row whose point is not in the grid (6 points: 0..5).
  auto edited = parts;
  std::string& text = edited.back().second;  // shard 0/3: points 0 and 3
  text.replace(text.find("\n3,"), 3, "\n9,");
  CHECK_THROWS_WITH_AS(static_cast<void>(recycle::sim::merge_study(edited)),
                       doctest::Contains("point 9 is not one of the study's 0..5"),
                       recycle::InputError);
}

TEST_CASE("study: paired keys, and bad sweeps and shards are errors") {
  const auto paired = recycle::sim::parse_sweep("parallel.pp/parallel.dp=8/16,16/8");
  CHECK(paired.keys == std::vector<std::string>{"parallel.pp", "parallel.dp"});
  CHECK(paired.values.size() == 2);
  CHECK(paired.values[1] == std::vector<std::string>{"16", "8"});
  CHECK_THROWS_AS(static_cast<void>(recycle::sim::parse_sweep("spares")), recycle::InputError);
  CHECK_THROWS_AS(static_cast<void>(recycle::sim::parse_sweep("a/b=1,2")), recycle::InputError);
  CHECK_THROWS_AS(static_cast<void>(recycle::sim::parse_shard("3/3")), recycle::InputError);
  CHECK_THROWS_AS(static_cast<void>(recycle::sim::parse_shard("1")), recycle::InputError);
  StudyOptions o = small_study();
  o.axes = {recycle::sim::parse_sweep("cluster.nodes=4")};  // smaller than the job
  CHECK_THROWS_WITH_AS(static_cast<void>(recycle::sim::run_study(o)),
                       doctest::Contains("job.json (point 0: cluster.nodes=4): cluster.nodes"),
                       recycle::InputError);
}

TEST_CASE("study: burst sweeps the preset's failure concentration") {
  StudyOptions o = small_study();
  o.axes = {recycle::sim::parse_sweep("burst=none,1:3")};
  const std::string csv = recycle::sim::run_study(o);
  CHECK(csv.find("\npoint,burst,seed,policy,") != std::string::npos);
  CHECK(csv.find("\n0,none,1,recycle,") != std::string::npos);
  CHECK(csv.find("\n1,1:3,1,recycle,") != std::string::npos);
  o.axes = {recycle::sim::parse_sweep("burst=2:3")};
  CHECK_THROWS_WITH(recycle::sim::run_study(o), doctest::Contains("--sweep burst"));
  o.axes = {recycle::sim::parse_sweep("burst=0.5:3")};
  o.preset.clear();
  CHECK_THROWS_WITH(recycle::sim::run_study(o), doctest::Contains("'burst' needs --trace-preset"));
}
