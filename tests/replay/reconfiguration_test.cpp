// What Oobleck and Bamboo are charged per reconfiguration (sim/replay/reconfiguration.hpp): the
// job file's figures, else the published setting of Oobleck's artifact for the nearest GPT-3 size.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "profiles/job.hpp"
#include "sim/replay/reconfiguration.hpp"

namespace {

recycle::profiles::Job job(const std::string& model, nlohmann::json restart = nullptr) {
  nlohmann::json j{{"model", model},
                   {"hardware", "a100-80g"},
                   {"parallel", {{"tp", 1}, {"pp", 2}, {"dp", 2}, {"global_batch", 8}}}};
  if (!restart.is_null()) j["restart"] = std::move(restart);
  return recycle::profiles::job_from_json(j, "job.json");
}

}  // namespace

TEST_CASE("reconfiguration: published settings by model size") {
  using recycle::sim::bamboo_reconfiguration;
  using recycle::sim::oobleck_reconfiguration;
  // GPT-3 Medium, 2.7B and 6.7B are the artifact's rows: 3 / 100 s, 6 / 230 s, 10 / 450 s.
  CHECK(oobleck_reconfiguration(job("gpt3-350m")).seconds == 3);
  CHECK(bamboo_reconfiguration(job("gpt3-350m")).seconds == 100);
  CHECK(oobleck_reconfiguration(job("gpt3-2.7b")).seconds == 6);
  CHECK(bamboo_reconfiguration(job("gpt3-2.7b")).seconds == 230);
  CHECK(oobleck_reconfiguration(job("gpt3-6.7b")).seconds == 10);
  CHECK(bamboo_reconfiguration(job("gpt3-6.7b")).seconds == 450);
  // 1.3B is nearer 2.7B than 350M in log size (ln 2.08 = 0.73 against ln 3.71 = 1.31).
  CHECK(oobleck_reconfiguration(job("gpt3-1.3b")).seconds == 6);
  // Past the largest reported size, the largest row: a floor, not an extrapolation.
  const auto big = bamboo_reconfiguration(job("gpt3-175b"));
  CHECK(big.seconds == 450);
  CHECK(big.source.find("GPT-3 6.7B") != std::string::npos);
}

TEST_CASE("reconfiguration: the job file's figures win, a policy's own over the shared one") {
  const auto shared = job("gpt3-175b", {{"reconfigure_s", 20}});
  CHECK(recycle::sim::oobleck_reconfiguration(shared).seconds == 20);
  CHECK(recycle::sim::bamboo_reconfiguration(shared).seconds == 20);
  const auto own = job("gpt3-175b", {{"reconfigure_s", 20}, {"oobleck_reconfigure_s", 7}});
  CHECK(recycle::sim::oobleck_reconfiguration(own).seconds == 7);
  CHECK(recycle::sim::bamboo_reconfiguration(own).seconds == 20);
  CHECK(recycle::sim::bamboo_reconfiguration(own).source == "the job file's reconfigure_s");
}
