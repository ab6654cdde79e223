#include "sim/report.hpp"

#include <fmt/format.h>

#include <cstdlib>

namespace recycle::sim {

namespace {

std::string_view kind_name(CriticalStep::Kind kind) {
  switch (kind) {
    case CriticalStep::Kind::kTransfer:
      return "transfer";
    case CriticalStep::Kind::kAllReduce:
      return "all_reduce";
    default:
      return "action";
  }
}

/// How transfers ran (--network): runtime, eager or direct.
const char* network_name(const SimRun& run) {
  if (run.options.network == planner::Network::kDirect) return "direct";
  return run.options.eager_sends ? "eager" : "runtime";
}

std::string describe_network(const SimRun& run) {
  const planner::Cluster& c = run.model.cluster;
  if (c.free()) return "free network and optimizer (--costs)";
  return fmt::format("{} GPUs per node, TP {}, {} network", c.gpus_per_node(), c.tensor_parallel(),
                     network_name(run));
}

/// The critical path as worker segments: "(0,0) 0F0 0SEND_F0 -> [send 1.01 ms] -> (0,1) 1RECV_F0
/// ...".
std::string critical_path_text(const Metrics& m, std::size_t max_steps) {
  std::string out;
  planner::WorkerId at{-1, -1};
  std::size_t shown = 0;
  for (const CriticalStep& step : m.critical_path) {
    if (shown++ == max_steps) {
      out += fmt::format(" ... ({} more steps; --json lists them all)",
                         m.critical_path.size() - max_steps);
      break;
    }
    if (step.kind == CriticalStep::Kind::kTransfer) {
      out += step.end > step.start
                 ? fmt::format(" -> [transfer {}] ->", format_duration(step.end - step.start))
                 : std::string(" ->");
      at = {-1, -1};
      continue;
    }
    if (step.worker != at) {
      out += fmt::format("{}{}:", out.empty() || out.back() == '>' ? " " : " | ",
                         planner::to_string(step.worker));
      at = step.worker;
    }
    out += " " + step.token;
    if (step.kind == CriticalStep::Kind::kAllReduce)
      out += fmt::format("[{}]", format_duration(step.end - step.start));
  }
  return out;
}

std::string steady_state_text(const planner::SteadyState& steady) {
  if (!steady.settled) {
    return fmt::format("no repetition within {} iterations: the last one's length",
                       steady.iterations);
  }
  if (steady.cycle > 1) {
    return fmt::format("steady state: mean of a cycle of {} iterations, found after {}",
                       steady.cycle, steady.iterations);
  }
  return fmt::format("steady state, found after {} iteration{}", steady.iterations,
                     steady.iterations == 1 ? "" : "s");
}

}  // namespace

std::string format_duration(Nanos ns) {
  const double v = static_cast<double>(ns);
  const Nanos a = std::llabs(ns);
  if (a >= kNanosPerSecond || a == 0) return fmt::format("{:.6g} s", v / 1e9);
  if (a >= 1'000'000) return fmt::format("{:.6g} ms", v / 1e6);
  if (a >= 1'000) return fmt::format("{:.6g} us", v / 1e3);
  return fmt::format("{} ns", ns);
}

std::string describe_layout(const planner::Schedule& schedule) {
  const planner::Layout& l = schedule.layout;
  std::string out = fmt::format("dp {} x pp {}, {} micro-batches", l.dp, l.pp, l.microbatches);
  if (l.interleave > 1) out += fmt::format(", interleave {}", l.interleave);
  if (l.placement == planner::Placement::kV) out += " placed in a V";
  if (!schedule.failed.empty()) {
    out += fmt::format(", {} failed worker{}", schedule.failed.size(),
                       schedule.failed.size() == 1 ? "" : "s");
  }
  return out;
}

nlohmann::ordered_json report_json(const SimRun& run, const Metrics& m,
                                   const profiles::Synthesis* job) {
  using nlohmann::ordered_json;
  const planner::Layout& l = run.schedule.layout;
  ordered_json failed = ordered_json::array();
  for (const planner::WorkerId& f : run.schedule.failed) failed.push_back({f.dp, f.stage});
  ordered_json ends = ordered_json::array();
  for (const Nanos e : m.iteration_ends) ends.push_back(to_seconds(e));
  ordered_json workers = ordered_json::array();
  for (const WorkerMetrics& w : m.workers) {
    workers.push_back({{"dp", w.id.dp},
                       {"stage", w.id.stage},
                       {"busy_s", to_seconds(w.busy)},
                       {"peak_inflight_microbatches", w.peak_inflight_microbatches},
                       {"peak_activation_bytes", w.peak_activation_bytes}});
  }
  ordered_json steps = ordered_json::array();
  for (const CriticalStep& s : m.critical_path) {
    ordered_json step = {{"kind", kind_name(s.kind)},      {"dp", s.worker.dp},
                         {"stage", s.worker.stage},        {"token", s.token},
                         {"start_s", to_seconds(s.start)}, {"end_s", to_seconds(s.end)}};
    if (s.kind == CriticalStep::Kind::kTransfer) {
      step["to_dp"] = s.peer.dp;
      step["to_stage"] = s.peer.stage;
    }
    steps.push_back(std::move(step));
  }
  ordered_json out = {{"format", "recycle.simulation/1"},
                      {"schedule",
                       {{"generator", run.schedule.generator},
                        {"dp", l.dp},
                        {"pp", l.pp},
                        {"microbatches", l.microbatches},
                        {"interleave", l.interleave},
                        {"placement", planner::placement_name(l.placement)},
                        {"failed", failed},
                        {"live_workers", run.schedule.workers.size()}}},
                      {"optimizer", optimizer_name(run)},
                      {"network", run.model.cluster.free() ? "free" : network_name(run)},
                      {"iterations", m.iterations},
                      {"iteration_ends_s", ends},
                      {"iteration_time_s", to_seconds(m.iteration_time)},
                      {"steady_state",
                       {{"settled", m.steady.settled},
                        {"cycle", m.steady.cycle},
                        {"iterations_walked", m.steady.iterations}}},
                      {"microbatches_per_iteration", m.microbatches_per_iteration},
                      {"microbatch_size", m.microbatch_size},
                      {"samples_per_iteration", m.samples_per_iteration},
                      {"throughput_samples_per_s", m.throughput}};
  if (job && m.iteration_time > 0) {
    out["mfu"] = job->mfu(to_seconds(m.iteration_time));
    out["tflops_per_gpu"] = job->tflops_per_gpu(to_seconds(m.iteration_time));
  }
  if (run.model.optimizer_shards > 1) {
    out["optimizer_shards"] = run.model.optimizer_shards;
    out["optimizer_shard_copies"] = run.model.optimizer_shard_copies;
  }
  out["bubble_fraction"] = m.bubble_fraction;
  out["events"] = run.timeline.events;
  out["workers"] = std::move(workers);
  out["critical_path"] = {{"length_s", to_seconds(m.critical_path_length)}, {"steps", steps}};
  return out;
}

std::string report_table(const SimRun& run, const Metrics& m, const profiles::Synthesis* job) {
  std::string out;
  auto line = [&out](std::string_view label, const std::string& value) {
    out += fmt::format("{:<18}{}\n", label, value);
  };
  line("schedule", fmt::format("{}: {}", run.schedule.generator, describe_layout(run.schedule)));
  const planner::CostModel& cm = run.model;
  const std::string sharded =
      cm.optimizer_shards <= 1
          ? std::string()
          : fmt::format(", its state sharded over {} data-parallel ranks{}", cm.optimizer_shards,
                        cm.optimizer_shard_copies > 1 ? " with replicas" : "");
  line("model",
       fmt::format("{}; {} optimizer{}", describe_network(run), optimizer_name(run), sharded));
  const std::string measured = steady_state_text(m.steady);
  line("iterations", fmt::format("{} simulated, {} events", m.iterations, run.timeline.events));
  line("iteration time", fmt::format("{}  ({})", format_duration(m.iteration_time), measured));
  line("throughput", fmt::format("{:.6g} samples/s  ({} micro-batches of {} per iteration)",
                                 m.throughput, m.microbatches_per_iteration, m.microbatch_size));
  if (job && m.iteration_time > 0) {
    const double seconds = to_seconds(m.iteration_time);
    line("utilization",
         fmt::format("MFU {:.1f} %, {:.1f} TFLOP/s per GPU on {} GPUs", 100 * job->mfu(seconds),
                     job->tflops_per_gpu(seconds), job->gpus));
  }
  line("bubble fraction", fmt::format("{:.4f}", m.bubble_fraction));
  line("critical path", fmt::format("{} in {} steps", format_duration(m.critical_path_length),
                                    m.critical_path.size()));
  out += "\n";
  out += fmt::format("{:<12}{:>14}{:>9}{:>17}{:>24}\n", "worker", "busy", "busy %",
                     "peak in-flight", "peak activation bytes");
  for (const WorkerMetrics& w : m.workers) {
    const double share = m.iteration_time > 0 ? 100.0 * static_cast<double>(w.busy) /
                                                    static_cast<double>(m.iteration_time)
                                              : 0;
    out += fmt::format("{:<12}{:>14}{:>9.2f}{:>17g}{:>24}\n", planner::to_string(w.id),
                       format_duration(w.busy), share, w.peak_inflight_microbatches,
                       w.peak_activation_bytes);
  }
  out += "\ncritical path of the last iteration:" + critical_path_text(m, 60) + "\n";
  return out;
}

}  // namespace recycle::sim
