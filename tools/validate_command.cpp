// `recycle validate`: measure the workload's operations, predict the schedule's iteration time
// with the simulator's steady state, run the schedule on the cpu backend, and compare.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "executor/measure.hpp"
#include "executor/runtime.hpp"
#include "planner/lower.hpp"
#include "planner/period.hpp"
#include "planner/semantics.hpp"
#include "tools/command.hpp"
#include "tools/layout_options.hpp"
#include "tools/schedule_request.hpp"

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
};

using executor::RunResult;

/// Seconds a worker's compute stream was busy per iteration, after the first iteration.
double measured_busy_s(const executor::WorkerRun& w, std::int32_t iterations) {
  std::int64_t busy = 0;
  for (const executor::TimedAction& t : w.timeline) {
    if (t.iteration == 0 || planner::stream_of(t.action.type) != planner::Stream::kCompute)
      continue;
    if (t.action.type == planner::ActionType::kReduceGrad) continue;  // a wait, not work
    busy += t.end_ns - t.start_ns;
  }
  return iterations > 1 ? static_cast<double>(busy) * 1e-9 / (iterations - 1) : 0.0;
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
          if (rv != v) continue;
          for (std::size_t i = 0; i < params.size(); ++i) {
            const double scale = std::max(1e-3, std::abs(static_cast<double>(ref[i])));
            worst = std::max(worst, std::abs(static_cast<double>(params[i]) - ref[i]) / scale);
          }
        }
      }
    }
  }
  return worst;
}

void print_count(std::int64_t processed, const planner::Layout& layout) {
  std::printf("micro-batches processed: %lld (each of the %d x %d per iteration exactly once)\n",
              static_cast<long long>(processed), layout.dp, layout.microbatches);
}

void print_equivalence(double difference) {
  std::printf("equivalence: max relative weight difference against the fault-free run: %.3g (%s)\n",
              difference, difference < 1e-5 ? "within 1e-5" : "ABOVE 1e-5");
}

int run_validate(const ValidateOptions& o) {
  if (o.backend != "cpu") {
    throw InputError("--backend", "'" + o.backend +
                                      "': this build runs schedules on the cpu backend only "
                                      "(the cuda backend does not run schedules yet)");
  }
  const planner::Layout layout = o.layout.layout();
  if (layout.interleave != 1)
    throw InputError("--interleave", "the executor runs interleave 1 schedules only");
  const executor::MeasuredStage measured = executor::measure_stage(o.run.shape, o.repetitions);
  planner::Costs costs = planner::Costs::uniform(layout.virtual_stages(), measured.cost);
  costs.optimizer.assign(static_cast<std::size_t>(layout.pp), measured.optimizer);
  const planner::CostModel model = planner::CostModel::compute_only(costs);
  planner::RunOptions direct;
  direct.network = planner::Network::kDirect;
  std::string why;
  const auto made = o.request.make(layout, model, direct, why);
  if (!made) {
    std::printf("infeasible: %s\n", why.c_str());
    return kExitFailed;
  }
  const planner::Schedule lowered = planner::lower(*made, model);
  const std::size_t cores = usable_cores();
  // More workers than cores share them, which the simulator does not model: the numbers can
  // still be checked, the time cannot.
  const bool timed = lowered.workers.size() <= cores;
  if (!timed && !o.equivalence) {
    throw InputError("--pp/--dp",
                     fmt::format("{} live workers need {} cores and this process may "
                                 "use {}: the cpu backend times one worker per core "
                                 "(--check-equivalence runs without timing)",
                                 lowered.workers.size(), lowered.workers.size(), cores));
  }
  const auto predicted = planner::steady_state(lowered, model, direct);
  if (!predicted) throw InputError("--schedule", "the schedule deadlocks");
  const RunResult run = executor::run_on_cpu(lowered, o.run);
  const double predicted_s = static_cast<double>(predicted->period) * 1e-9;
  const double measured_s = run.iteration_time_s();
  const double error_pct = 100.0 * (predicted_s - measured_s) / measured_s;
  const double samples =
      static_cast<double>(layout.dp) * layout.microbatches * o.run.shape.microbatch_size;

  std::optional<double> difference;
  if (o.equivalence) {
    ScheduleRequest fault_free = o.request;
    fault_free.fail.clear();
    std::string none;
    const auto reference_schedule = fault_free.make(layout, model, direct, none);
    RECYCLE_ASSERT(reference_schedule.has_value(), "a fault-free schedule is always feasible");
    const RunResult reference = executor::run_on_cpu(*reference_schedule, o.run);
    difference = max_weight_difference(run, reference);
  }

  if (!timed) {
    if (o.json) {
      std::printf("%s\n", nlohmann::json({{"backend", o.backend},
                                          {"schedule", made->generator},
                                          {"microbatches_processed", run.microbatches_processed},
                                          {"iterations", o.run.iterations},
                                          {"max_relative_weight_difference", *difference}})
                              .dump(2)
                              .c_str());
    } else {
      std::printf(
          "%s on the cpu backend: %zu live workers share %zu cores, so the time is not "
          "compared (the simulator does not model the sharing)\n",
          made->generator.c_str(), lowered.workers.size(), cores);
      print_count(run.microbatches_processed, layout);
      print_equivalence(*difference);
    }
  } else if (o.json) {
    nlohmann::json j = {{"backend", o.backend},
                        {"schedule", made->generator},
                        {"predicted_iteration_time_s", predicted_s},
                        {"measured_iteration_time_s", measured_s},
                        {"error_pct", error_pct},
                        {"microbatches_processed", run.microbatches_processed},
                        {"iterations", o.run.iterations}};
    if (difference) j["max_relative_weight_difference"] = *difference;
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf(
        "%s on the cpu backend: PP %d, DP %d, %d micro-batches of %d x %d, %d layers per "
        "stage, %zu live workers, %d iterations\n",
        made->generator.c_str(), layout.pp, layout.dp, layout.microbatches,
        o.run.shape.microbatch_size, o.run.shape.width, o.run.shape.layers, lowered.workers.size(),
        o.run.iterations);
    std::printf(
        "measured costs per micro-batch: F %.3f ms, I %.3f ms, W %.3f ms, optimizer %.3f ms\n",
        measured.cost.forward * 1e-6, measured.cost.backward_input * 1e-6,
        measured.cost.backward_weight * 1e-6, measured.optimizer * 1e-6);
    std::printf("%-28s %12s %12s %8s\n", "", "predicted", "measured", "error");
    std::printf("%-28s %10.3f ms %10.3f ms %+7.1f%%\n", "iteration time", predicted_s * 1e3,
                measured_s * 1e3, error_pct);
    std::printf("%-28s %12.1f %12.1f\n", "throughput (samples/s)", samples / predicted_s,
                samples / measured_s);
    for (std::size_t i = 0; i < lowered.workers.size(); ++i) {
      const auto p = predicted_busy_s(lowered.workers[i], costs);
      const auto m = measured_busy_s(run.workers[i], o.run.iterations);
      std::printf("busy %-23s %10.3f ms %10.3f ms %+7.1f%%\n",
                  planner::to_string(lowered.workers[i].id).c_str(), p * 1e3, m * 1e3,
                  m > 0 ? 100.0 * (p - m) / m : 0.0);
    }
    print_count(run.microbatches_processed, layout);
    if (difference) {
      print_equivalence(*difference);
    }
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
  sub->add_option("--backend", o->backend, "cpu (default)");
  sub->add_option("--width", o->run.shape.width, "Features per layer (default 256)")
      ->check(CLI::Range(1, 16384));
  sub->add_option("--layers-per-stage", o->run.shape.layers, "Dense layers per stage (default 2)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--microbatch-size", o->run.shape.microbatch_size,
                  "Samples per micro-batch (default 32)")
      ->check(CLI::Range(1, 65536));
  sub->add_option("--iterations", o->run.iterations,
                  "Iterations to run; the first is warm-up (default 4)")
      ->check(CLI::Range(2, 100000));
  sub->add_option("--seed", o->run.seed, "Seed of the weights and the synthetic data (default 1)");
  sub->add_option("--repetitions", o->repetitions,
                  "Timed runs of each operation for the measured costs (default 20)")
      ->check(CLI::Range(1, 100000));
  sub->add_flag("--check-equivalence", o->equivalence,
                "Also train fault-free from the same seed and compare the final weights (exit 1 "
                "above 1e-5)");
  sub->add_flag("--json", o->json, "Print JSON");
  sub->footer(
      examples({"recycle validate --schedule 1f1b --pp 2 --microbatches 8",
                "recycle validate --schedule recycle --pp 2 --dp 2 --microbatches 4 --fail 1:0 "
                "--check-equivalence"}));
  return {sub, [o] { return run_validate(*o); }};
}

}  // namespace recycle::tools
