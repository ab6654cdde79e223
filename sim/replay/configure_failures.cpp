#include "sim/replay/configure_failures.hpp"

#include <algorithm>
#include <atomic>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "planner/job_model.hpp"
#include "profiles/job.hpp"
#include "sim/replay/replay.hpp"
#include "sim/replay/shared_plans.hpp"
#include "sim/replay/trace_on_cluster.hpp"
#include "traces/generator.hpp"
#include "traces/presets.hpp"
#include "traces/trace.hpp"

namespace recycle::sim {

nlohmann::ordered_json configuration_job(const planner::Configuration& c, const FailureSpace& space,
                                         std::int64_t spares) {
  nlohmann::ordered_json job =
      profiles::job_to_json(space.model, space.hardware, c.parallel, c.schedule);
  job["cluster"] = {{"spares", spares}};
  if (space.checkpoint_interval) {
    job["checkpoint"] = {{"interval_s", *space.checkpoint_interval}};
  } else {
    job["checkpoint"] = {{"interval_s", "auto"}};
  }
  return job;
}

std::vector<FailureRow> rank_under_failures(
    const std::vector<planner::Configuration>& configurations, const FailureSpace& space) {
  const std::size_t seeds =
      space.preset.empty() ? 1 : static_cast<std::size_t>(std::max<std::int64_t>(space.seeds, 1));
  const std::size_t per_config = space.spares.size() * seeds;
  // Configurations of one model key replay alike (planner::model_key): each is replayed once.
  std::vector<std::size_t> unique;                           // configurations replayed
  std::vector<std::size_t> replayed(configurations.size());  // configuration -> index in unique
  {
    std::vector<std::string> keys;
    for (std::size_t ci = 0; ci < configurations.size(); ++ci) {
      profiles::Job job =
          profiles::job_from_json(nlohmann::json(configuration_job(configurations[ci], space, 0)),
                                  "configuration " + std::to_string(ci + 1));
      const std::string key =
          planner::model_key(planner::job_model(job), configurations[ci].schedule);
      const auto it = std::find(keys.begin(), keys.end(), key);
      replayed[ci] = static_cast<std::size_t>(it - keys.begin());
      if (it == keys.end()) {
        keys.push_back(key);
        unique.push_back(ci);
      }
    }
  }
  const std::size_t tasks = unique.size() * per_config;
  std::atomic<std::size_t> done{0};
  // The replays of one configuration and spares count share its plans
  // (sim/replay/shared_plans.hpp): a failure set that recurs on another seed's trace is planned
  // once. Seed by seed, so that the threads replay different configurations at once rather than
  // plan the same sets twice.
  std::vector<SharedPlans> plans(unique.size() * space.spares.size());
  const auto task = [&](std::size_t u, std::size_t si, std::size_t k) {
    return (u * space.spares.size() + si) * seeds + k;
  };
  // One replay per configuration, spares count and seed, every policy in it.
  std::vector<ReplayResult> results = parallel_map(
      tasks,
      [&](std::size_t e) {
        const std::size_t k = e / (unique.size() * space.spares.size());
        const std::size_t u = e / space.spares.size() % unique.size();
        const std::size_t si = e % space.spares.size();
        const std::size_t ci = unique[u];
        const std::int64_t spares = space.spares[si];
        const auto seed = static_cast<std::uint64_t>(k + 1);
        const std::string source = fmt::format("configuration {} with {} spares", ci + 1, spares);
        const profiles::Job job = profiles::job_from_json(
            nlohmann::json(configuration_job(configurations[ci], space, spares)), source);
        const planner::JobModel model = planner::job_model(job);
        const std::int64_t nodes = job.resilience.cluster.nodes;
        ReplayOptions options;
        options.policies = space.policies;
        options.shared_plans = &plans[u * space.spares.size() + si];
        traces::Trace trace;
        if (space.preset.empty()) {
          trace = trace_on_cluster(*space.trace, space.map, nodes, source);
          options.duration = replay_duration(trace, space.days);
        } else {
          traces::GeneratorOptions generator =
              traces::find_generator_preset(space.preset, "--trace-preset").options;
          generator.days = space.days;
          if (space.rate) generator.rate = *space.rate;
          generator.nodes = nodes;
          generator.seed = seed;
          trace = traces::generate_trace(generator);
        }
        ReplayResult r = replay(model, trace, options);
        for (PolicyResult& p : r.policies) p.timeline.clear();  // not kept: memory
        if (space.progress) {
          space.progress(static_cast<double>(++done) / static_cast<double>(tasks));
        }
        return r;
      },
      space.threads);
  {
    // In (configuration, spares, seed) order.
    std::vector<ReplayResult> ordered(tasks);
    for (std::size_t e = 0; e < tasks; ++e) {
      ordered[task(e / space.spares.size() % unique.size(), e % space.spares.size(),
                   e / (unique.size() * space.spares.size()))] = std::move(results[e]);
    }
    results = std::move(ordered);
  }

  std::vector<FailureRow> rows;
  for (std::size_t ci = 0; ci < configurations.size(); ++ci) {
    for (std::size_t si = 0; si < space.spares.size(); ++si) {
      for (std::size_t pi = 0; pi < space.policies.size(); ++pi) {
        FailureRow row;
        row.candidate = ci;
        row.policy = space.policies[pi];
        row.spares = space.spares[si];
        row.slowest = std::numeric_limits<double>::infinity();
        double samples = 0;
        double gpu_hours = 0;
        for (std::size_t k = 0; k < seeds; ++k) {
          const PolicyResult& p = results[task(replayed[ci], si, k)].policies[pi];
          if (!p.unfit.empty()) {
            row.unfit = p.unfit;
            break;
          }
          row.samples_per_s += p.mean_throughput;
          row.slowest = std::min(row.slowest, p.mean_throughput);
          row.fastest = std::max(row.fastest, p.mean_throughput);
          row.goodput += p.goodput;
          samples += p.samples;
          gpu_hours += p.gpu_hours;
          for (std::size_t c = 0; c < kLostCauses; ++c) row.lost_s[c] += p.lost_s[c];
        }
        if (row.unfit.empty()) {
          const auto n = static_cast<double>(seeds);
          row.samples_per_s /= n;
          row.goodput /= n;
          for (double& x : row.lost_s) x /= n;
          row.samples_per_gpu_hour = gpu_hours > 0 ? samples / gpu_hours : 0;
        } else {
          row.slowest = 0;
        }
        rows.push_back(std::move(row));
      }
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const FailureRow& a, const FailureRow& b) {
    if (a.unfit.empty() != b.unfit.empty()) return a.unfit.empty();
    return a.samples_per_s > b.samples_per_s;
  });
  return rows;
}

}  // namespace recycle::sim
