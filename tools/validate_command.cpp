// `recycle validate`: measure the workload's operations, predict the schedule's iteration time
// with the simulator's steady state, run the schedule on the cpu backend, and compare.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/parallel.hpp"
#include "core/parse.hpp"
#include "executor/machine_load.hpp"
#include "executor/measure.hpp"
#include "executor/run_costs.hpp"
#include "executor/runtime.hpp"
#include "executor/sequential.hpp"
#include "planner/generators.hpp"
#include "planner/language/failures.hpp"
#include "planner/language/lower.hpp"
#include "planner/language/semantics.hpp"
#include "planner/language/validator.hpp"
#include "planner/timing/cost_graph.hpp"
#include "planner/timing/period.hpp"
#include "sim/shared_cores.hpp"
#include "tools/backends.hpp"
#include "tools/command.hpp"
#include "tools/layout_options.hpp"
#include "tools/measured_chrome_trace.hpp"
#include "tools/schedule_request.hpp"
#include "tools/trace_source.hpp"
#include "tools/whole_range.hpp"
#include "tools/workload_options.hpp"
#if RECYCLE_HAVE_MPI
#include "executor/mpi/processes.hpp"
#endif

namespace recycle::tools {

namespace {

struct ValidateOptions {
  LayoutOptions layout;
  ScheduleRequest request;
  std::string backend = "cpu";
  executor::RunConfig run;
  std::int32_t repetitions = 20;
  bool json = false;
  bool equivalence = false;
  std::vector<std::string> kills;  ///< DP:STAGE@ITERATION[.FRACTION]
  std::int32_t heartbeat_ms = 10;
  std::string chrome_trace;
  std::string seed = "1";  ///< --seed, checked as every command's (seed_value)
};

/// One --kill: the worker, the iteration (from 0), the fraction of its actions done first.
struct KillSpec {
  planner::WorkerId worker;
  std::int32_t iteration = 0;
  double fraction = 0;
};

KillSpec parse_kill(const std::string& text, const planner::Layout& layout,
                    std::int32_t iterations) {
  const std::string flag = "--kill " + text;
  const auto parts = split(text, '@');
  const auto when =
      parts.size() == 2 ? split(trim(parts[1]), '.') : std::vector<std::string_view>{};
  const auto digits = [](std::string_view d) {
    return !d.empty() && d.size() <= 9 &&
           std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (when.empty() || when.size() > 2 || !digits(when[0]) ||
      (when.size() == 2 && !digits(when[1]))) {
    throw InputError(flag,
                     "expected DP:STAGE@ITERATION[.FRACTION], each of ITERATION and FRACTION 1 to "
                     "9 digits, e.g. 0:1@2.5 (worker 0:1, half-way through iteration 2, counted "
                     "from 0)");
  }
  const auto workers = planner::parse_failures(std::string(parts[0]), layout, flag);
  if (workers.size() != 1) throw InputError(flag, "names one worker");
  KillSpec kill;
  kill.worker = workers.front();
  kill.iteration = static_cast<std::int32_t>(parse_int(when[0], flag));
  kill.fraction = when.size() == 2 ? parse_double("0." + std::string(when[1]), flag) : 0.0;
  if (kill.iteration >= iterations) {
    throw InputError(flag, "iteration " + std::to_string(kill.iteration) +
                               " is not run (--iterations " + std::to_string(iterations) +
                               " runs 0.." + std::to_string(iterations - 1) + ")");
  }
  return kill;
}

using executor::RunResult;

/// Seconds a worker's compute stream was busy per iteration over iterations [from, to) (not
/// counting dropped work): the work of its actions (their processor time on shared cores).
double measured_busy_s(const executor::WorkerRun& w, std::int32_t from, std::int32_t to) {
  std::int64_t busy = 0;
  for (const executor::TimedAction& t : w.timeline) {
    if (t.dropped || t.iteration < from || t.iteration >= to ||
        planner::stream_of(t.action.type) != planner::Stream::kCompute)
      continue;
    if (t.action.type == planner::ActionType::kReduceGrad) continue;  // a wait, not work
    busy += t.work_ns();
  }
  return to > from ? static_cast<double>(busy) * 1e-9 / (to - from) : 0.0;
}

double predicted_busy_s(const planner::WorkerSchedule& w, const planner::Costs& costs) {
  Nanos busy = 0;
  for (const planner::Action& a : w.actions) busy += costs.duration(a);
  return static_cast<double>(busy) * 1e-9;
}

/// The largest relative difference between the final weights of `run` and those of the same
/// stage in `reference` (relative to max(|reference|, 1e-3)).
double max_weight_difference(const RunResult& run, const RunResult& reference) {
  double worst = 0;
  for (const executor::WorkerRun& w : run.workers) {
    for (const auto& [v, params] : w.parameters) {
      for (const executor::WorkerRun& r : reference.workers) {
        for (const auto& [rv, ref] : r.parameters) {
          if (rv == v) worst = std::max(worst, executor::max_relative_difference(params, ref));
        }
      }
    }
  }
  return worst;
}

/// The same against per-stage weights `reference` (executor/sequential.hpp).
double max_weight_difference(const RunResult& run,
                             const std::vector<std::vector<float>>& reference) {
  double worst = 0;
  for (const executor::WorkerRun& w : run.workers) {
    for (const auto& [v, params] : w.parameters) {
      worst = std::max(worst, executor::max_relative_difference(
                                  params, reference.at(static_cast<std::size_t>(v))));
    }
  }
  return worst;
}

std::string failed_text(const std::vector<planner::WorkerId>& failed) {
  std::string text;
  for (const planner::WorkerId& w : failed)
    text += (text.empty() ? "" : ",") + std::to_string(w.dp) + ":" + std::to_string(w.stage);
  return text;
}

/// One schedule the run went through: what the simulator predicts for it and what it measured.
struct Segment {
  std::string name;  ///< "1f1b", "recycle around 1:1"
  planner::Schedule lowered;
  double predicted_s = 0;
  /// The prediction again from the run's own costs (executor/run_costs.hpp); nullopt when the
  /// workers shared a GPU.
  std::optional<double> predicted_from_run_s;
  std::optional<double> measured_s;  ///< nullopt when fewer than two of its iterations finished
  std::vector<double> times_s;       ///< each of its iterations after the first, measured
  std::int32_t first = 0, end = 0;   ///< its iterations
};

/// The measurement's own spread: the median of a segment's iteration times and their range.
struct Spread {
  double median = 0, low = 0, high = 0;
  /// Whether `predicted` lies within the range: an error no larger than the run's own variation.
  [[nodiscard]] bool holds(double predicted) const { return low <= predicted && predicted <= high; }
};

std::optional<Spread> spread_of(const Segment& s) {
  if (s.times_s.empty()) return std::nullopt;
  std::vector<double> t = s.times_s;
  std::sort(t.begin(), t.end());
  const std::size_t n = t.size();
  return Spread{n % 2 == 1 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2, t.front(), t.back()};
}

/// Actions shorter than this are too short to time against the thread hand-offs and the
/// scheduler's wake-ups on a small machine: measured on 2 cores (docs/validation.md), 1F1B at
/// PP 2 with 8 micro-batches erred by -14 % to -57 % with a shortest action of 0.09 ms (--width
/// 256), by -17 % to +8 % at 0.35-0.38 ms (512), and by -7 % to +2 % at 1.7-2.0 ms (1024; one
/// run of nine -9.5 %, from one slow iteration).
constexpr double kShortestTimedS = 1e-3;

/// Other processes busy beyond what the run leaves free by this many cores on average: the
/// measurement includes waiting for them.
constexpr double kBusyMarginCores = 0.25;

/// The machine the run was measured on, beside the run itself.
struct Conditions {
  std::optional<double> others_cores;  ///< cores other processes kept busy (machine_load.hpp)
  std::int64_t machine_cores = 0;      ///< online cpus
  std::int64_t run_cores = 0;          ///< cores the run's workers compute on at once
  /// Whether other processes took more than the cores the run left free.
  [[nodiscard]] bool busy() const {
    return others_cores &&
           *others_cores > static_cast<double>(machine_cores - run_cores) + kBusyMarginCores;
  }
};

/// The shortest of the measured F, I and W of a stage's micro-batch, in seconds.
double shortest_action_s(const profiles::StageProfile& stage, char& which) {
  const std::pair<char, Nanos> actions[] = {
      {'F', stage.forward}, {'I', stage.backward_input}, {'W', stage.backward_weight}};
  const auto* low =
      std::min_element(std::begin(actions), std::end(actions),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  which = low->first;
  return static_cast<double>(low->second) * 1e-9;
}

std::string name_of(const planner::Schedule& s) {
  return s.failed.empty() ? s.generator : s.generator + " around " + failed_text(s.failed);
}

/// The run's kills with the plan each switches to: ReCycle's plan for the failure set so far.
std::vector<executor::Kill> plan_kills(const ValidateOptions& o, const planner::Layout& layout,
                                       const planner::Schedule& first,
                                       const planner::CostModel& model,
                                       const planner::RunOptions& run) {
  std::vector<executor::Kill> kills;
  std::vector<planner::WorkerId> failed = first.failed;
  for (const std::string& text : o.kills) {
    const KillSpec spec = parse_kill(text, layout, o.run.iterations);
    if (std::find(failed.begin(), failed.end(), spec.worker) != failed.end())
      throw InputError("--kill " + text,
                       "worker " + text.substr(0, text.find('@')) + " has already failed");
    failed.push_back(spec.worker);
    std::sort(failed.begin(), failed.end());
    ScheduleRequest next = o.request;
    next.name = "recycle";
    next.fail = failed_text(failed);
    std::string why;
    const auto plan = next.make(layout, model, run, why);
    if (!plan) {
      throw InputError("--kill " + text,
                       "after it " + why + ": ReCycle cannot go on without a restart");
    }
    kills.push_back({spec.worker, spec.iteration, spec.fraction, planner::lower(*plan, model)});
  }
  return kills;
}

void print_text(const ValidateOptions& o, const profiles::Profile& measured, std::int32_t in_flight,
                const planner::Costs& costs, const std::vector<Segment>& segments,
                const RunResult& run, const Sharing& sharing, const std::vector<double>& throughput,
                std::optional<double> difference, const Conditions& conditions) {
  const planner::Layout& layout = segments.front().lowered.layout;
  std::printf(
      "%s on the %s backend: PP %d, DP %d, %d micro-batches of %d x %d, %s per stage, "
      "%zu live workers, %d iterations\n",
      segments.front().name.c_str(), o.backend.c_str(), layout.pp, layout.dp, layout.microbatches,
      o.run.shape.rows(), o.run.shape.width, executor::describe_layers(o.run.shape).c_str(),
      segments.front().lowered.workers.size(), o.run.iterations);
  if (sharing.shared && sharing.unit == "GPU") {
    std::string rates;
    for (const double r : throughput) rates += fmt::format(" {:.3f}", r);
    std::printf(
        "%zu live workers share one GPU, each on its own stream, and the prediction shares the "
        "GPU among its running actions (docs/validation.md); its throughput with 1, 2, ... "
        "actions at once, measured:%s\n",
        segments.front().lowered.workers.size(), rates.c_str());
  } else if (sharing.shared) {
    std::printf(
        "%zu live workers share %zu cores: worker i of the list runs on core i %% %zu, and the "
        "prediction shares each core among its running actions (docs/validation.md)\n",
        segments.front().lowered.workers.size(), sharing.units, sharing.units);
  }
  const profiles::StageProfile& stage = measured.stages.front();
  // Threads sharing cores are timed by their processor time (executor::TimingLoad).
  const std::string clock = sharing.shared && !sharing.pin_cpus.empty()
                                ? ", processor time with " +
                                      std::to_string(sharing.unit_of.size()) +
                                      " threads placed as the workers"
                                : "";
  // Under mpirun a message to another process also has its own measured cost.
  const profiles::HardwareSpec& hw = measured.hardware;
  const std::string between =
      hw.inter_node_latency == hw.intra_node_latency
          ? ""
          : fmt::format("; between processes {:.1f} us and {:.2f} GB/s",
                        hw.inter_node_latency * 1e-3, hw.inter_node_bandwidth * 1e-9);
  std::printf(
      "measured costs per micro-batch, %d held at once%s: F %.3f ms, I %.3f ms, W %.3f ms, "
      "loss %.3f ms (in the last stage's I), optimizer %.3f ms, hand-off %.1f us%s\n",
      in_flight, clock.c_str(), stage.forward * 1e-6, stage.backward_input * 1e-6,
      stage.backward_weight * 1e-6, measured.loss * 1e-6, stage.optimizer * 1e-6,
      hw.intra_node_latency * 1e-3, between.c_str());
  for (std::size_t i = 0; i < segments.size(); ++i) {
    if (i > 0) {
      const executor::Recovery& r = run.recoveries[i - 1];
      const std::string& kill = o.kills[i - 1];
      std::printf(
          "kill %s: worker %s stopped at %.1f ms; its last heartbeat at %.1f ms; found silent at "
          "%.1f ms (%d missed beats of %d ms); %d iteration(s) from %d dropped, %lld micro-batch "
          "losses uncounted; resumed at %.1f ms on %s\n",
          kill.c_str(), planner::to_string(r.killed).c_str(), r.kill_ns * 1e-6,
          r.last_beat_ns * 1e-6, r.detect_ns * 1e-6, o.run.heartbeat.missed, o.heartbeat_ms,
          r.dropped_iterations, r.resumed_at, static_cast<long long>(r.dropped_microbatches),
          r.resume_ns * 1e-6, segments[i].name.c_str());
    }
    const Segment& s = segments[i];
    const double samples =
        static_cast<double>(layout.dp) * layout.microbatches * o.run.shape.microbatch_size;
    std::printf("%-36s %12s %12s %8s\n",
                (s.end > s.first ? fmt::format("iterations {}..{}: {}", s.first, s.end - 1, s.name)
                                 : fmt::format("iteration {}, dropped: {}", s.first, s.name))
                    .c_str(),
                "predicted", "measured", "error");
    if (!s.measured_s) {
      std::printf("%-36s %10.3f ms %12s (fewer than two iterations finished)\n", "iteration time",
                  s.predicted_s * 1e3, "-");
      continue;
    }
    std::printf("%-36s %10.3f ms %10.3f ms %+7.1f%%\n", "iteration time", s.predicted_s * 1e3,
                *s.measured_s * 1e3, 100.0 * (s.predicted_s - *s.measured_s) / *s.measured_s);
    if (s.predicted_from_run_s) {
      std::printf("%-36s %10.3f ms %10.3f ms %+7.1f%%\n", "  from the run's own costs",
                  *s.predicted_from_run_s * 1e3, *s.measured_s * 1e3,
                  100.0 * (*s.predicted_from_run_s - *s.measured_s) / *s.measured_s);
    }
    if (const auto spread = spread_of(s)) {
      std::printf(
          "  %zu iteration(s) measured: median %.3f ms, %.3f to %.3f ms; the prediction "
          "is %s\n",
          s.times_s.size(), spread->median * 1e3, spread->low * 1e3, spread->high * 1e3,
          spread->holds(s.predicted_s) ? "inside that range (the error is within the "
                                         "run's own variation)"
                                       : "outside that range");
    }
    std::printf("%-36s %12.1f %12.1f\n", "throughput (samples/s)", samples / s.predicted_s,
                samples / *s.measured_s);
  }
  if (sharing.shared && sharing.pin_cpus.empty()) {
    std::printf("busy times not compared: a shared GPU stretches every action's wall time\n");
  } else {
    // Per worker, over the iterations of the last schedule after its first.
    const Segment& last = segments.back();
    for (const planner::WorkerSchedule& w : last.lowered.workers) {
      const auto found = std::find_if(run.workers.begin(), run.workers.end(),
                                      [&](const executor::WorkerRun& r) { return r.id == w.id; });
      const double p = predicted_busy_s(w, costs);
      if (!last.measured_s) {  // its iterations after the first: none
        std::printf("busy %-31s %10.3f ms %12s\n", planner::to_string(w.id).c_str(), p * 1e3, "-");
        continue;
      }
      const double m = measured_busy_s(*found, last.first + 1, last.end);
      std::printf("busy %-31s %10.3f ms %10.3f ms %+7.1f%%\n", planner::to_string(w.id).c_str(),
                  p * 1e3, m * 1e3, m > 0 ? 100.0 * (p - m) / m : 0.0);
    }
  }
  std::int64_t dropped = 0;
  for (const executor::Recovery& r : run.recoveries) dropped += r.dropped_microbatches;
  std::printf("micro-batches processed: %lld (each of the %d x %d per iteration exactly once)",
              static_cast<long long>(run.microbatches_processed), layout.dp, layout.microbatches);
  if (!run.recoveries.empty())
    std::printf("; %lld more computed in dropped iterations and redone",
                static_cast<long long>(dropped));
  std::printf("\n");
  if (difference) {
    std::printf("equivalence: max relative weight difference against %s: %.3g (%s)\n",
                segments.front().lowered.weight_versions == 2
                    ? "sequential training under PipeDream-2BW's update, W(t+1) = W(t) - lr "
                      "grad f(W(t-1)) (not synchronous SGD)"
                    : "the fault-free run",
                *difference, *difference < 1e-5 ? "within 1e-5" : "ABOVE 1e-5");
  }
  char which = 'F';
  const double shortest = shortest_action_s(stage, which);
  if (shortest < kShortestTimedS) {
    std::printf(
        "note: the shortest action (%c, %.3f ms) takes under %.0f ms: at that length the thread "
        "hand-offs and the scheduler's wake-ups are a large share of an iteration, and the "
        "error varies from run to run (docs/validation.md); a larger --width (1024, the "
        "default, or more) or --microbatch-size times actions of milliseconds\n",
        which, shortest * 1e3, kShortestTimedS * 1e3);
  }
  if (conditions.busy()) {
    std::printf(
        "note: other processes kept %.2f of this machine's %lld cores busy during the run, "
        "which left %lld free beside its %lld: the measured times include waiting for them, "
        "which the prediction does not model; measure on a quiet machine\n",
        *conditions.others_cores, static_cast<long long>(conditions.machine_cores),
        static_cast<long long>(conditions.machine_cores - conditions.run_cores),
        static_cast<long long>(conditions.run_cores));
  }
}

nlohmann::json to_json(const ValidateOptions& o, const std::vector<Segment>& segments,
                       const RunResult& run, bool shared, const std::vector<double>& throughput,
                       std::optional<double> difference, const profiles::StageProfile& stage,
                       const Conditions& conditions) {
  const auto number = [](std::optional<double> x) {
    return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
  };
  const auto error = [](const Segment& s) -> std::optional<double> {
    if (!s.measured_s) return std::nullopt;
    return 100.0 * (s.predicted_s - *s.measured_s) / *s.measured_s;
  };
  const auto error_from_run = [](const Segment& s) -> std::optional<double> {
    if (!s.measured_s || !s.predicted_from_run_s) return std::nullopt;
    return 100.0 * (*s.predicted_from_run_s - *s.measured_s) / *s.measured_s;
  };
  nlohmann::json j = {{"backend", o.backend},
                      {"schedule", segments.front().lowered.generator},
                      {"shared_cores", shared},
                      {"microbatches_processed", run.microbatches_processed},
                      {"iterations", o.run.iterations}};
  const Segment& last = segments.back();
  j["predicted_iteration_time_s"] = last.predicted_s;
  j["measured_iteration_time_s"] = number(last.measured_s);
  j["error_pct"] = number(error(last));
  j["predicted_from_run_costs_s"] = number(last.predicted_from_run_s);
  j["error_from_run_costs_pct"] = number(error_from_run(last));
  j["measured_iteration_times_s"] = last.times_s;
  if (const auto spread = spread_of(last)) {
    j["measured_median_s"] = spread->median;
    j["measured_min_s"] = spread->low;
    j["measured_max_s"] = spread->high;
    j["prediction_inside_spread"] = spread->holds(last.predicted_s);
  }
  char which = 'F';
  j["shortest_action_s"] = shortest_action_s(stage, which);
  j["shortest_action_too_short"] = j["shortest_action_s"].get<double>() < kShortestTimedS;
  j["other_processes_busy_cores"] = number(conditions.others_cores);
  j["machine_cores"] = conditions.machine_cores;
  j["machine_busier_than_assumed"] = conditions.busy();
  if (!throughput.empty()) j["gpu_sharing_throughput"] = throughput;
  if (difference) {
    j["max_relative_weight_difference"] = *difference;
    j["equivalence_reference"] =
        segments.front().lowered.weight_versions == 2 ? "2bw sequential" : "fault-free run";
  }
  if (!run.recoveries.empty()) {
    nlohmann::json& list = j["segments"] = nlohmann::json::array();
    for (const Segment& s : segments) {
      list.push_back({{"schedule", s.name},
                      {"first_iteration", s.first},
                      {"end_iteration", s.end},
                      {"predicted_iteration_time_s", s.predicted_s},
                      {"measured_iteration_time_s", number(s.measured_s)},
                      {"measured_iteration_times_s", s.times_s},
                      {"error_pct", number(error(s))},
                      {"predicted_from_run_costs_s", number(s.predicted_from_run_s)},
                      {"error_from_run_costs_pct", number(error_from_run(s))}});
    }
    nlohmann::json& kills = j["kills"] = nlohmann::json::array();
    for (std::size_t i = 0; i < run.recoveries.size(); ++i) {
      const executor::Recovery& r = run.recoveries[i];
      kills.push_back({{"kill", o.kills[i]},
                       {"kill_s", r.kill_ns * 1e-9},
                       {"last_heartbeat_s", r.last_beat_ns * 1e-9},
                       {"detected_s", r.detect_ns * 1e-9},
                       {"resumed_s", r.resume_ns * 1e-9},
                       {"resumed_at_iteration", r.resumed_at},
                       {"dropped_iterations", r.dropped_iterations},
                       {"dropped_microbatches", r.dropped_microbatches}});
    }
  }
  return j;
}

int run_validate(ValidateOptions o) {
  const Backend backend = parse_backend(o.backend);
  o.run.seed = seed_value(o.seed);
  o.request.settle(nullptr);  // --base only with recycle
  const planner::Layout layout = o.layout.resolve(o.request.placed_by()).layout;
#if RECYCLE_HAVE_MPI
  if (const executor::mpi::Processes* processes = executor::mpi::current();
      processes != nullptr && layout.workers() % processes->size() != 0) {
    // Each process is a node to the prediction (tools/backends.hpp): as many workers in each.
    throw InputError("mpirun",
                     fmt::format("{} processes for dp {} x pp {} = {} workers: give a "
                                 "process count that divides the workers",
                                 processes->size(), layout.dp, layout.pp, layout.workers()));
  }
#endif
  o.run.heartbeat.period = std::chrono::milliseconds(o.heartbeat_ms);
  if (!o.kills.empty() && o.run.heartbeat.period * o.run.heartbeat.missed >= o.run.wait_limit) {
    // Every wait gives up at the limit: a failure must be found before the waits on it give up.
    throw InputError("--heartbeat-ms",
                     fmt::format("{} ms x --missed-beats {}: a killed worker would be found after "
                                 "{} s, and every wait gives up after {} s",
                                 o.heartbeat_ms, o.run.heartbeat.missed,
                                 o.heartbeat_ms * o.run.heartbeat.missed / 1000,
                                 o.run.wait_limit.count() / 1000));
  }
  for (const std::string& kill : o.kills) {
    static_cast<void>(parse_kill(kill, layout, o.run.iterations));  // refused before measuring
  }
  planner::RunOptions direct;
  direct.network = planner::Network::kDirect;
  // The most micro-batches a worker holds at once: the operations are timed holding as many.
  std::int32_t in_flight = 1;
  Sharing placed;  // where the run's workers will compute: the operations are timed so placed
  {
    // Whether the run fits is known from the schedule's shape before anything is timed.
    const planner::CostModel unit = planner::CostModel::compute_only(
        planner::Costs::uniform(layout.virtual_stages(), {1, 1, 1}));
    std::string why;
    const auto sketch = o.request.make(layout, unit, direct, why);
    // No schedule for the failure set (every replica of a stage failed): nothing can run.
    if (!sketch) throw InputError("--fail", why);
    require_run_fits(backend, *sketch, o.run.shape, o.run.iterations);
    placed = sharing_for(backend, *sketch);
    for (const std::int32_t held : planner::peak_inflight_chunks(planner::lower(*sketch, unit)))
      in_flight = std::max(in_flight, held);
  }
  // Other processes' use of the machine, from before the costs are timed to the run's end.
  const std::optional<executor::LoadSample> load_before = executor::sample_load();
  const profiles::Profile measured =
      measure_profile(backend, o.run.shape, layout.pp, layout.dp, o.repetitions, in_flight, placed);
  // Measured per chunk; a worker of several chunks (interleaved, V) runs that many per stage.
  const planner::CostModel model = planner::CostModel::from_profile(
      per_stage(measured, layout.interleave), layout, "the measured profile");
  const planner::Costs& costs = model.compute;
  std::string why;
  const auto made = o.request.make(layout, model, direct, why);
  if (!made) {
    std::printf("infeasible: %s\n", why.c_str());
    return kExitFailed;
  }
  const planner::Schedule lowered = planner::lower(*made, model);
  o.run.kills = plan_kills(o, layout, lowered, model, direct);
  // More live workers than cores, or workers on one GPU, share them (sim/shared_cores.hpp): the
  // prediction is then the mean spacing of iteration ends after the first over the run's
  // iterations, as measured.
  const Sharing sharing = sharing_for(backend, lowered);
  const bool shared = sharing.shared;
  // Workers on one GPU: how much more it does with several computing at once, measured.
  const std::vector<double> throughput =
      measure_sharing(backend, o.run.shape, sharing, std::max(1, o.repetitions / 2));
  o.run.pin_cpus = sharing.pin_cpus;
  // Worker i of the first schedule stays on its unit after a kill too.
  const auto core_of = [&](const planner::Schedule& plan) {
    std::vector<std::int32_t> out;
    for (const planner::WorkerSchedule& w : plan.workers) {
      const auto at = std::find_if(lowered.workers.begin(), lowered.workers.end(),
                                   [&](const planner::WorkerSchedule& x) { return x.id == w.id; });
      out.push_back(sharing.unit_of[static_cast<std::size_t>(at - lowered.workers.begin())]);
    }
    return out;
  };
  // A schedule's predicted iteration time with `with`'s costs: the steady-state period, or with
  // shared units the walk of sim/shared_cores.hpp over the run's iterations.
  const auto predict = [&](const planner::Schedule& plan,
                           const planner::CostModel& with) -> std::optional<double> {
    if (!shared) {
      const auto period = planner::steady_state(plan, with, direct);
      if (!period) return std::nullopt;
      return static_cast<double>(period->period) * 1e-9;
    }
    planner::GraphOptions graph;
    graph.network = planner::Network::kDirect;
    graph.staggered_optimizer = plan.staggered_optimizer;
    const auto ends = sim::shared_core_iteration_ends(plan, with, graph, core_of(plan),
                                                      o.run.iterations, throughput);
    if (!ends) return std::nullopt;
    return static_cast<double>(ends->back() - ends->front()) * 1e-9 / (o.run.iterations - 1);
  };
  std::vector<Segment> segments;
  for (std::size_t i = 0; i <= o.run.kills.size(); ++i) {
    const planner::Schedule& plan = i == 0 ? lowered : o.run.kills[i - 1].then;
    Segment& segment = segments.emplace_back();
    segment.name = name_of(plan);
    segment.lowered = plan;
    const auto predicted = predict(plan, model);
    if (!predicted) throw InputError("--schedule", "the schedule deadlocks");
    segment.predicted_s = *predicted;
  }

  const RunResult run = run_on(backend, lowered, o.run);
  Conditions conditions;
  if (const auto load_after = executor::sample_load(); load_before && load_after)
    conditions.others_cores = executor::others_busy_cores(*load_before, *load_after);
  conditions.machine_cores = std::max<long>(1, sysconf(_SC_NPROCESSORS_ONLN));
  conditions.run_cores = static_cast<std::int64_t>(
      sharing.shared ? sharing.units : std::min(lowered.workers.size(), usable_cores()));
  for (std::size_t i = 0; i < segments.size(); ++i) {
    segments[i].first = run.segment_start[i];
    segments[i].end = i + 1 < segments.size() ? run.segment_start[i + 1] : o.run.iterations;
    if (segments[i].end - segments[i].first >= 2) {
      segments[i].measured_s = run.iteration_time_s(i);
      segments[i].times_s = run.iteration_times_s(i);
    }
  }
  if (!shared || !o.run.pin_cpus.empty()) {
    // The same prediction from what the run's own actions took (their processor time on shared
    // cores): its error is the schedule model's alone, the rest of the first error the costs
    // timed before the run. Not for workers sharing a GPU, whose actions' times include the
    // others' work.
    planner::CostModel own = model;
    own.compute = executor::run_costs(run, costs);
    for (Segment& segment : segments) segment.predicted_from_run_s = predict(segment.lowered, own);
  }
  std::optional<double> difference;
  if (o.equivalence && lowered.weight_versions == 2) {
    // 2bw trains other weights than synchronous SGD: the reference is its own rule.
    difference = max_weight_difference(run, executor::train_sequentially(layout, o.run, 2));
  } else if (o.equivalence) {
    ScheduleRequest fault_free = o.request;
    fault_free.fail.clear();
    std::string none;
    const auto reference_schedule = fault_free.make(layout, model, direct, none);
    RECYCLE_ASSERT(reference_schedule.has_value(), "a fault-free schedule is always feasible");
    executor::RunConfig reference_config = o.run;
    reference_config.kills.clear();
    const RunResult reference = run_on(backend, *reference_schedule, reference_config);
    difference = max_weight_difference(run, reference);
  }
  if (!o.chrome_trace.empty()) write_text_file(o.chrome_trace, measured_chrome_trace(lowered, run));
  if (o.json) {
    std::printf("%s\n", to_json(o, segments, run, shared, throughput, difference,
                                measured.stages.front(), conditions)
                            .dump(2)
                            .c_str());
  } else {
    print_text(o, measured, in_flight, costs, segments, run, sharing, throughput, difference,
               conditions);
  }
  return difference && *difference >= 1e-5 ? kExitFailed : kExitOk;
}

}  // namespace

Command add_validate_command(CLI::App& app) {
  auto o = std::make_shared<ValidateOptions>();
  CLI::App* sub = app.add_subcommand(
      "validate",
      "Run a schedule on real arithmetic and compare its measured iteration time with the "
      "simulator's prediction from measured costs");
  o->layout.add_layout_to(*sub);
  o->request.add_to(*sub)->required();
  sub->add_option("--backend", o->backend,
                  "cpu (default): a thread per worker on OpenBLAS; cuda: a GPU per worker, or "
                  "every worker on a one-GPU machine's GPU");
  // Actions of milliseconds, which the thread hand-offs and the scheduler's wake-ups do not
  // swamp (kShortestTimedS); the layers profile measure times keep the executor's default.
  o->run.shape.width = 1024;
  add_shape_options(*sub, o->run.shape);
  sub->add_option("--iterations", o->run.iterations,
                  "Iterations to run; the first is warm-up (default 4)")
      ->check(whole_range(2, 100000));
  sub->add_option("--seed", o->seed, "Seed of the weights and the synthetic data (default 1)");
  add_repetitions_option(*sub, o->repetitions);
  sub->add_flag("--check-equivalence", o->equivalence,
                "Also train fault-free from the same seed and compare the final weights (exit 1 "
                "above 1e-5)");
  sub->add_option("--kill", o->kills,
                  "Stop worker DP:STAGE in iteration ITERATION (from 0) after FRACTION of its "
                  "actions, e.g. 0:1@2.5; the others find it by its missed heartbeats, drop the "
                  "iteration and go on on ReCycle's plan for the new failure set. Repeatable, in "
                  "order");
  sub->add_option("--heartbeat-ms", o->heartbeat_ms,
                  "Heartbeat period; a worker silent for --missed-beats periods has failed "
                  "(default 10)")
      ->check(whole_range(1, 10000));
  sub->add_option("--missed-beats", o->run.heartbeat.missed,
                  "Heartbeats missed in a row before a worker counts as failed (default 5)")
      ->check(whole_range(1, 1000));
  add_output(*sub, "--chrome-trace", o->chrome_trace,
             "Write the measured timeline as a Chrome trace, in the format of recycle "
             "simulate --chrome-trace (open both in ui.perfetto.dev)");
  sub->add_flag("--json", o->json, "Print JSON");
  sub->footer(
      examples({"recycle validate --schedule 1f1b --pp 2 --microbatches 8",
                "recycle validate --schedule recycle --pp 2 --dp 2 --microbatches 4 --fail 1:0 "
                "--check-equivalence",
                "recycle validate --schedule 1f1b --pp 2 --dp 2 --microbatches 4 --iterations 8 "
                "--kill 1:1@3.5 --check-equivalence",
                "mpirun -np 2 recycle validate --schedule 1f1b --pp 2 --microbatches 8   # the "
                "workers in 2 processes (builds with MPI; docs/validation.md)"}));
  return {sub, [o] { return run_validate(*o); }};
}

}  // namespace recycle::tools
