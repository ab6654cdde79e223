#include "executor/wire_format.hpp"

#include <chrono>
#include <utility>

#include "planner/language/schedule_io.hpp"

namespace recycle::executor {

std::vector<char> encode_run(std::int32_t backend, const planner::Schedule& schedule,
                             const RunConfig& config) {
  Writer out;
  out.put(backend);
  out.put_string(planner::to_json(schedule));
  out.put(config.shape);
  out.put(config.iterations);
  out.put(config.seed);
  out.put(config.learning_rate);
  out.put(static_cast<std::int64_t>(config.wait_limit.count()));
  out.put(static_cast<std::int64_t>(config.heartbeat.period.count()));
  out.put(config.heartbeat.missed);
  out.put_vector(config.pin_cpus);
  out.put(static_cast<std::uint64_t>(config.kills.size()));
  for (const Kill& kill : config.kills) {
    out.put(kill.worker);
    out.put(kill.iteration);
    out.put(kill.fraction);
    out.put_string(planner::to_json(kill.then));
  }
  return std::move(out.bytes());
}

RunRequest decode_run(const std::vector<char>& bytes) {
  Reader in(bytes);
  const auto backend = in.get<std::int32_t>();
  planner::Schedule schedule = planner::schedule_from_json(in.get_string(), "process 0's schedule");
  RunConfig config;
  config.shape = in.get<StageShape>();
  config.iterations = in.get<std::int32_t>();
  config.seed = in.get<std::uint64_t>();
  config.learning_rate = in.get<double>();
  config.wait_limit = std::chrono::milliseconds(in.get<std::int64_t>());
  config.heartbeat.period = std::chrono::milliseconds(in.get<std::int64_t>());
  config.heartbeat.missed = in.get<std::int32_t>();
  config.pin_cpus = in.get_vector<int>();
  const auto kills = in.get<std::uint64_t>();
  for (std::uint64_t k = 0; k < kills; ++k) {
    Kill kill;
    kill.worker = in.get<planner::WorkerId>();
    kill.iteration = in.get<std::int32_t>();
    kill.fraction = in.get<double>();
    kill.then = planner::schedule_from_json(in.get_string(), "process 0's plan after a kill");
    config.kills.push_back(std::move(kill));
  }
  return {backend, std::move(schedule), std::move(config)};
}

}  // namespace recycle::executor
