// The bytes a multi-process run sends (executor/wire_format.hpp): a message's size counted by
// hand, values read back in order, and a run's request through encode_run and decode_run.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "executor/wire_format.hpp"
#include "planner/generators.hpp"
#include "planner/recycle_planner.hpp"

namespace {

using namespace recycle;

}  // namespace

TEST_CASE("Writer and Reader: sizes by hand, values back in order") {
  executor::Writer out;
  out.put(std::int32_t{7});                         // 4 bytes
  out.put_vector(std::vector<float>{1, 2.5f, -3});  // 8 for the count + 3 x 4
  out.put_string("abc");                            // 8 + 3
  out.put(planner::WorkerId{2, 5});                 // 2 x 4
  CHECK(out.bytes().size() == 4 + (8 + 12) + (8 + 3) + 8);
  const std::vector<char> bytes = out.bytes();
  executor::Reader in(bytes);
  CHECK(in.get<std::int32_t>() == 7);
  CHECK(in.get_vector<float>() == std::vector<float>{1, 2.5f, -3});
  CHECK(in.get_string() == "abc");
  CHECK(in.get<planner::WorkerId>() == planner::WorkerId{2, 5});
  // Empty vectors and strings take their count alone.
  executor::Writer empty;
  empty.put_vector(std::vector<double>{});
  empty.put_string("");
  CHECK(empty.bytes().size() == 16);
}

TEST_CASE("a run's request reads back as it was written, its kills' plans included") {
  planner::GeneratorOptions gen;
  gen.layout = {2, 2, 4, 1};
  const planner::Schedule schedule = planner::generate_fault_free("1f1b", gen);
  planner::RecycleOptions plan;
  plan.layout = gen.layout;
  plan.failed = {{1, 0}};
  executor::RunConfig config;
  config.shape.width = 64;
  config.shape.layers = 3;
  config.iterations = 5;
  config.seed = 99;
  config.learning_rate = 0.125;
  config.wait_limit = std::chrono::milliseconds(1234);
  config.heartbeat.period = std::chrono::milliseconds(20);
  config.heartbeat.missed = 4;
  config.pin_cpus = {0, 1};
  config.kills.push_back({{1, 0}, 2, 0.5, planner::plan_recycle(plan).schedule});
  const executor::RunRequest back = executor::decode_run(executor::encode_run(1, schedule, config));
  CHECK(back.backend == 1);
  CHECK(back.schedule.layout == schedule.layout);
  REQUIRE(back.schedule.workers.size() == schedule.workers.size());
  for (std::size_t w = 0; w < schedule.workers.size(); ++w)
    CHECK(back.schedule.workers[w].actions == schedule.workers[w].actions);
  CHECK(back.config.shape.width == 64);
  CHECK(back.config.shape.layers == 3);
  CHECK(back.config.iterations == 5);
  CHECK(back.config.seed == 99);
  CHECK(back.config.learning_rate == 0.125);
  CHECK(back.config.wait_limit.count() == 1234);
  CHECK(back.config.heartbeat.period.count() == 20);
  CHECK(back.config.heartbeat.missed == 4);
  CHECK(back.config.pin_cpus == std::vector<int>{0, 1});
  REQUIRE(back.config.kills.size() == 1);
  const executor::Kill& kill = back.config.kills.front();
  CHECK(kill.worker == planner::WorkerId{1, 0});
  CHECK(kill.iteration == 2);
  CHECK(kill.fraction == 0.5);
  CHECK(kill.then.workers.size() == config.kills.front().then.workers.size());
  CHECK(kill.then.failed == config.kills.front().then.failed);
}
