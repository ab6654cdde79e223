#include "sim/replay/replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <queue>
#include <tuple>

#include "core/error.hpp"
#include "planner/language/work_limits.hpp"
#include "sim/replay/checkpoint_interval.hpp"
#include "sim/replay/reconfiguration.hpp"
#include "sim/replay/replay_slots.hpp"

namespace recycle::sim {

namespace {

/// A node that came up joins the pool `node_join_s` later, unless it fails again first.
struct Join {
  Nanos time = 0;
  std::int64_t sequence = 0;
  std::int64_t node = 0;
  std::uint32_t generation = 0;

  friend bool operator>(const Join& a, const Join& b) {
    return std::tie(a.time, a.sequence) > std::tie(b.time, b.sequence);
  }
};

ResilienceCosts costs_of(const profiles::Job& job, const traces::Trace& trace, Nanos end) {
  const profiles::Resilience& r = job.resilience;
  ResilienceCosts c;
  c.detection = to_nanos(r.detection.delay_s());
  c.restart = to_nanos(r.restart.job_restart_s + r.checkpoint.load_s);
  for (const auto& [nodes, seconds] : r.restart.job_restart_by_nodes) {
    c.restart_by_nodes[nodes] = to_nanos(seconds + r.checkpoint.load_s);
  }
  c.write = to_nanos(r.checkpoint.write_s);
  c.oobleck_reconfigure = to_nanos(oobleck_reconfiguration(job).seconds);
  c.bamboo_reconfigure = to_nanos(bamboo_reconfiguration(job).seconds);
  // The next event of the job's nodes: half its mean time between failures (a failure, then its
  // repair), or the whole replay when the trace has no failure.
  const std::optional<double> mtbf = job_mtbf_s(job, trace, end);
  c.horizon = mtbf ? to_nanos(*mtbf / 2) : end;
  return c;
}

PolicyResult run_policy(PolicyKind kind, const profiles::Job& job, ReplayRates& rates,
                        const traces::Trace& trace, Nanos end, Seconds interval_s, double done,
                        double share, const ReplayOptions& options) {
  const profiles::Resilience& r = job.resilience;
  const std::int64_t nodes = r.cluster.nodes;
  JobSlots slots(r.job_nodes, nodes, rates.layout(), job.parallel.tp, r.cluster.gpus_per_node);
  const Nanos fault_free = rates.fault_free();
  CheckpointRule rule;
  rule.interval = to_nanos(interval_s);
  rule.iterations = r.checkpoint.interval_iterations;
  rule.write = to_nanos(r.checkpoint.write_s);
  rule.after_restart = r.checkpoint.after_restart;
  rule.rollback = r.restart.rollback;
  JobClock clock(fault_free, rule);
  PolicyContext ctx{clock, slots, rates, costs_of(job, trace, end)};
  const std::unique_ptr<Policy> policy = make_policy(kind, r.cluster.min_nodes);
  const Nanos join = to_nanos(r.restart.node_join_s);

  const std::vector<traces::Event>& events = trace.events();
  std::size_t next = 0;
  // Nodes down when the observation began are not failures: the job starts without them.
  for (; next < events.size() && events[next].time == 0; ++next) {
    if (events[next].kind == traces::EventKind::kDown) {
      slots.node_down(static_cast<std::int64_t>(events[next].node));
    } else {
      slots.node_ready(static_cast<std::int64_t>(events[next].node));
    }
  }
  policy->start(ctx);

  PolicyResult out;
  out.policy = kind;
  std::vector<std::uint32_t> generation(static_cast<std::size_t>(nodes), 0);
  std::priority_queue<Join, std::vector<Join>, std::greater<>> joins;
  std::int64_t sequence = 0;
  std::int64_t handled = 0;
  while (true) {
    const bool trace_next = next < events.size() && events[next].time <= end &&
                            (joins.empty() || events[next].time <= joins.top().time);
    const bool join_next = !trace_next && !joins.empty() && joins.top().time <= end;
    if (!trace_next && !join_next) break;
    if (trace_next) {
      const traces::Event& e = events[next++];
      const auto node = static_cast<std::int64_t>(e.node);
      clock.advance(e.time);
      if (e.kind == traces::EventKind::kDown) {
        // Nodes that go down at one instant are one burst: one detection, one recovery
        // (restart.merge_simultaneous; else one after another).
        std::vector<std::int64_t> lost;
        for (std::int64_t n = node;;) {
          ++generation[static_cast<std::size_t>(n)];
          if (const std::int64_t slot = slots.node_down(n); slot >= 0) lost.push_back(slot);
          if (!r.restart.merge_simultaneous || next >= events.size() ||
              events[next].time != e.time || events[next].kind != traces::EventKind::kDown) {
            break;
          }
          n = static_cast<std::int64_t>(events[next++].node);
        }
        out.failures += static_cast<std::int64_t>(lost.size());
        if (!lost.empty()) policy->slots_lost(ctx, lost);
      } else {
        joins.push({e.time + join, sequence++, node, generation[static_cast<std::size_t>(node)]});
      }
    } else {
      const Join j = joins.top();
      joins.pop();
      clock.advance(j.time);
      if (j.generation == generation[static_cast<std::size_t>(j.node)]) {
        slots.node_ready(j.node);
        // restart.join "next_failure": a running job takes the node from the pool at its next
        // failure (every policy fills from the pool then); a stopped one at once.
        if (!r.restart.join_at_next_failure || !clock.running()) policy->node_joined(ctx);
      }
    }
    if (options.progress && ++handled % 64 == 0) {
      options.progress(done + share * static_cast<double>(clock.now()) / static_cast<double>(end));
    }
  }
  clock.advance(end);

  const double seconds = to_seconds(end);
  out.samples = clock.iterations() * static_cast<double>(job.parallel.global_batch);
  out.goodput = clock.iterations() * to_seconds(fault_free) / seconds;
  out.ettr = to_seconds(clock.productive()) / seconds;
  out.mean_throughput = out.samples / seconds;
  out.lost_s = clock.lost_s();
  out.gpu_hours =
      static_cast<double>(nodes) * r.cluster.gpus_per_node * seconds / traces::kSecondsPerHour;
  out.fallbacks = ctx.fallbacks;
  out.timeline = clock.timeline();
  out.actions = policy->actions();
  return out;
}

}  // namespace

ReplayResult replay(const planner::JobModel& model, const traces::Trace& trace,
                    const ReplayOptions& options) {
  const profiles::Job& job = model.job;
  const profiles::Resilience& r = job.resilience;
  if (trace.node_count() > r.cluster.nodes) {
    throw InputError("--trace", "the trace watched " + std::to_string(trace.node_count()) +
                                    " nodes and the job's cluster has " +
                                    std::to_string(r.cluster.nodes) +
                                    "; --map wrap or --map scale says how to replay it");
  }
  const Nanos end = options.duration < 0 ? trace.duration() : options.duration;
  if (end <= 0) throw InputError("--trace", "the trace lasts no time: nothing to replay");
  // Each event replayed may need a plan for a new failure set: bounded before any is made.
  const auto& events = trace.events();
  const auto replayed =
      std::upper_bound(events.begin(), events.end(), end,
                       [](Nanos t, const traces::Event& e) { return t < e.time; }) -
      events.begin();
  planner::require_replay_work(replayed, model.layout);
  ReplayRates rates(model, options.table, options.shared_plans);
  ReplayResult result;
  result.duration = end;
  result.samples_per_iteration = static_cast<double>(job.parallel.global_batch);
  result.fault_free_iteration = rates.fault_free();
  const CheckpointInterval interval =
      checkpoint_interval(job, trace, end, to_seconds(result.fault_free_iteration));
  result.checkpoint_interval_s = interval.seconds;
  // The job clock steps once per checkpoint (sim/replay/replay_clock.cpp): at most 2^24 of them, a
  // checkpoint every 0.15 s over 30 days, where real intervals are minutes to hours.
  constexpr double kMaxCheckpoints = 16'777'216;
  const double cycle_s = interval.seconds + r.checkpoint.write_s;
  if (to_seconds(end) / cycle_s > kMaxCheckpoints) {
    throw InputError(job.source + ": checkpoint.interval_s",
                     fmt::format("{:g} s (and {:g} s per write) over {:g} days replayed is more "
                                 "than 2^24 checkpoints; a replay writes at most that many",
                                 interval.seconds, r.checkpoint.write_s, to_seconds(end) / 86'400));
  }

  result.schedule = job.schedule;
  {
    const auto second = [](Seconds s) { return fmt::format("{:g} s", s); };
    const ReconfigurationCost oobleck = oobleck_reconfiguration(job);
    const ReconfigurationCost bamboo = bamboo_reconfiguration(job);
    result.charges = {
        fmt::format(
            "detection {}, restart {}{}{}{}{}", second(r.detection.delay_s()),
            r.restart.job_restart_by_nodes.empty()
                ? second(r.restart.job_restart_s + r.checkpoint.load_s) +
                      " (job_restart_s + load_s)"
                : fmt::format("by the live nodes (the job file's job_restart_s table of {} rows, "
                              "+ load_s)",
                              r.restart.job_restart_by_nodes.size()),
            r.restart.rollback ? "" : ", keeping what the survivors hold (no rollback)",
            r.restart.merge_simultaneous ? "" : ", failures at one instant taken one by one",
            r.restart.join_at_next_failure ? ", nodes join at the next failure" : "",
            r.cluster.min_nodes > 0 ? fmt::format(", a stop below {} nodes", r.cluster.min_nodes)
                                    : std::string()),
        fmt::format("a checkpoint every {} of training taking {} ({}){}",
                    fmt::format("{:.6g} s", interval.seconds), second(r.checkpoint.write_s),
                    interval.source,
                    r.checkpoint.after_restart
                        ? ", and one after the first iteration that follows a restart"
                        : ""),
        fmt::format("oobleck re-instantiation {} ({})", second(oobleck.seconds), oobleck.source),
        fmt::format("bamboo reconfiguration {} ({})", second(bamboo.seconds), bamboo.source)};
    if (job.parallel.distributed_optimizer && job.parallel.dp > 1) {
      result.charges.push_back(
          job.parallel.shard_copies == 1
              ? fmt::format("optimizer state sharded over the {} data-parallel ranks, one copy: a "
                            "failure loses its ranks' shards, so recycle, oobleck, bamboo and "
                            "adaptive restart from the last checkpoint too",
                            job.parallel.dp)
              : fmt::format("optimizer state sharded over the {} data-parallel ranks with a "
                            "replica on the next rank: only a failure of a shard and its replica "
                            "at once sends the in-place policies back to the checkpoint; a lost "
                            "replica is copied again",
                            job.parallel.dp));
    }
  }
  result.cluster_nodes = r.cluster.nodes;
  result.gpus = r.cluster.nodes * r.cluster.gpus_per_node;
  const auto count = static_cast<double>(options.policies.size());
  for (std::size_t i = 0; i < options.policies.size(); ++i) {
    const PolicyKind kind = options.policies[i];
    std::string why;
    if (kind == PolicyKind::kBamboo && !rates.bamboo_fault_free()) why = rates.bamboo_unfit();
    if (!why.empty()) {
      PolicyResult unfit;
      unfit.policy = kind;
      unfit.unfit = std::move(why);
      unfit.gpu_hours =
          static_cast<double>(result.gpus) * to_seconds(end) / traces::kSecondsPerHour;
      result.policies.push_back(std::move(unfit));
      continue;
    }
    result.policies.push_back(run_policy(options.policies[i], job, rates, trace, end,
                                         interval.seconds, static_cast<double>(i) / count,
                                         1.0 / count, options));
  }
  result.outrun = rates.outrun();
  result.configurations = rates.configurations();
  result.from_table = rates.from_table();
  if (options.progress) options.progress(1.0);
  return result;
}

}  // namespace recycle::sim
