#include "executor/runtime.hpp"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <utility>

#include "core/error.hpp"
#include "executor/channels.hpp"
#include "executor/cpu_pin.hpp"
#include "executor/footprint.hpp"
#include "executor/heartbeat.hpp"
#include "executor/placement.hpp"
#include "executor/run_schedule.hpp"
#include "planner/language/lower.hpp"
#include "planner/language/validator.hpp"

namespace recycle::executor {

using planner::Action;
using planner::ActionType;
using planner::WorkerId;

namespace {

double mean_spacing_s(const std::vector<std::int64_t>& ends, std::size_t first, std::size_t last) {
  if (last <= first + 1) return 0;
  return static_cast<double>(ends[last - 1] - ends[first]) * 1e-9 /
         static_cast<double>(last - 1 - first);
}

}  // namespace

double RunResult::iteration_time_s() const {
  if (iteration_end_ns.empty()) return 0;
  if (iteration_end_ns.size() == 1) return static_cast<double>(iteration_end_ns.front()) * 1e-9;
  return mean_spacing_s(iteration_end_ns, 0, iteration_end_ns.size());
}

namespace {

/// The iterations [first, last) of schedule `segment`.
std::pair<std::size_t, std::size_t> segment_range(const RunResult& r, std::size_t segment) {
  const auto first = static_cast<std::size_t>(r.segment_start.at(segment));
  const std::size_t last = segment + 1 < r.segment_start.size()
                               ? static_cast<std::size_t>(r.segment_start[segment + 1])
                               : r.iteration_end_ns.size();
  return {first, last};
}

}  // namespace

double RunResult::iteration_time_s(std::size_t segment) const {
  const auto [first, last] = segment_range(*this, segment);
  return mean_spacing_s(iteration_end_ns, first, last);
}

std::vector<double> RunResult::iteration_times_s(std::size_t segment) const {
  const auto [first, last] = segment_range(*this, segment);
  std::vector<double> out;
  for (std::size_t k = first + 1; k < last; ++k)
    out.push_back(static_cast<double>(iteration_end_ns[k] - iteration_end_ns[k - 1]) * 1e-9);
  return out;
}

namespace {

/// The cpu backend (executor/run_schedule.hpp): StageParams on OpenBLAS, messages moved between
/// threads, the all-reduce of executor/channels.hpp.
class CpuBackend {
 public:
  using Tensor = std::vector<float>;
  using Stage = StageParams;
  using Chunk = executor::Chunk;
  using Reduce = AllReduceGroup<>;

  explicit CpuBackend(std::vector<int> pin_cpus) : pin_cpus_(std::move(pin_cpus)) {}

  void enter(std::size_t w) const {
    if (!pin_cpus_.empty()) pin_to(pin_cpus_[w % pin_cpus_.size()]);
  }
  static Stage make_stage(std::size_t /*w*/, const StageShape& shape, std::int32_t v,
                          std::uint64_t seed) {
    return {shape, v, seed};
  }
  void load(std::vector<std::vector<float>> inputs, std::vector<std::vector<float>> targets) {
    inputs_ = std::move(inputs);
    targets_ = std::move(targets);
  }
  const Tensor& input(std::size_t /*w*/, std::size_t slot) const { return inputs_[slot]; }
  const Tensor& target(std::size_t /*w*/, std::size_t slot) const { return targets_[slot]; }
  static void connect(std::size_t /*from*/, std::size_t /*to*/) {}
  static Tensor send(Tensor data, std::size_t /*from*/, std::size_t /*to*/) { return data; }
  static double loss(std::size_t /*w*/, const Tensor& out, const Tensor& target, Tensor& gradient) {
    return StageParams::loss(out, target, gradient);
  }
  static std::unique_ptr<Reduce> make_reduce(const std::vector<std::size_t>& ranks, Abort& abort) {
    return std::make_unique<Reduce>(static_cast<std::int32_t>(ranks.size()), abort);
  }
  static std::vector<float> download(const Tensor& t) { return t; }
  // Its tensors are host floats: nothing to move between the host and a device.
  static std::vector<float> into_host(Tensor data) { return data; }
  static Tensor from_host(std::size_t /*w*/, std::vector<float> data) { return data; }
  template <class F>
  static void on_host(Tensor& data, F&& f) {
    std::forward<F>(f)(data);
  }

 private:
  std::vector<int> pin_cpus_;
  std::vector<std::vector<float>> inputs_, targets_;
};

}  // namespace

namespace detail {

/// The schedule as the runtime runs it: lowered, checked; errors name `what`.
planner::Schedule checked(const planner::Schedule& schedule, const std::string& what) {
  if (schedule.has_lags() && schedule.weight_versions != 2) {
    throw InputError(what, std::string("lists that run across iterations need two weight versions "
                                       "(2bw); this schedule keeps one (") +
                               planner::optimizer_name(schedule) + ")");
  }
  planner::Schedule lowered = schedule.is_lowered() ? schedule : planner::lower(schedule);
  planner::require_valid(lowered, what);
  return lowered;
}

/// The virtual stages each worker of `schedule` computes on.
std::map<WorkerId, std::vector<std::int32_t>> stages_held(const planner::Schedule& schedule) {
  std::map<WorkerId, std::vector<std::int32_t>> held;
  for (const planner::WorkerSchedule& w : schedule.workers) {
    auto& list = held[w.id];
    for (const Action& a : w.actions) {
      if (planner::is_compute(a.type) &&
          std::find(list.begin(), list.end(), a.virtual_stage) == list.end())
        list.push_back(a.virtual_stage);
    }
  }
  return held;
}

std::vector<std::pair<WorkerId, WorkerId>> send_pairs(const planner::Schedule& schedule) {
  const planner::RouteTable routes(schedule);
  std::vector<std::pair<WorkerId, WorkerId>> pairs;
  for (const planner::WorkerSchedule& w : schedule.workers) {
    for (const Action& a : w.actions) {
      if (a.type != ActionType::kSendF && a.type != ActionType::kSendB) continue;
      const std::int32_t reader_v = a.virtual_stage + (a.type == ActionType::kSendF ? 1 : -1);
      const WorkerId reader = routes.worker_of(a.owner, reader_v, a.microbatch);
      const std::pair pair{w.id, reader};
      if (reader != w.id && std::find(pairs.begin(), pairs.end(), pair) == pairs.end())
        pairs.push_back(pair);
    }
  }
  return pairs;
}

/// Lowers and checks every schedule of the run: the first, then each kill's, which must keep the
/// layout, leave out the killed worker and ask no survivor for a stage it does not hold.
std::vector<planner::Schedule> checked_plans(const planner::Schedule& schedule,
                                             const RunConfig& config) {
  std::vector<planner::Schedule> plans{checked(schedule, "schedule")};
  if (!config.kills.empty() && schedule.weight_versions != 1) {
    throw InputError("--kill", std::string("a kill drops and redoes whole iterations, which a "
                                           "schedule of two weight versions (") +
                                   planner::optimizer_name(schedule) + ") runs across");
  }
  std::int32_t previous = 0;
  for (const Kill& kill : config.kills) {
    const planner::Schedule& now = plans.back();
    const auto held = stages_held(now);
    const std::string who = "--kill " + std::to_string(kill.worker.dp) + ":" +
                            std::to_string(kill.worker.stage) + "@" +
                            std::to_string(kill.iteration);
    if (held.count(kill.worker) == 0)
      throw InputError(who, "worker " + planner::to_string(kill.worker) + " is not running then");
    if (kill.iteration >= config.iterations || kill.iteration < 0) {
      throw InputError(who, "iteration " + std::to_string(kill.iteration) +
                                " is not run (--iterations " + std::to_string(config.iterations) +
                                ")");
    }
    if (kill.iteration < previous) {
      throw InputError(who, "kills must come in the order they strike: this one is in iteration " +
                                std::to_string(kill.iteration) + ", before the previous kill's " +
                                std::to_string(previous));
    }
    if (!(kill.fraction >= 0 && kill.fraction < 1))
      throw InputError(who, "the fraction of the iteration must be in [0, 1)");
    previous = kill.iteration;
    planner::Schedule then = checked(kill.then, who + " (the plan after it)");
    if (!(then.layout == now.layout)) throw InputError(who, "the plan after it has another layout");
    std::vector<WorkerId> failed = now.failed;
    failed.push_back(kill.worker);
    std::sort(failed.begin(), failed.end());
    if (then.failed != failed)
      throw InputError(who, "the plan after it is not for the failure set the kill makes");
    for (const auto& [id, stages] : stages_held(then)) {
      const auto before = held.find(id);
      const bool holds = before != held.end() && id != kill.worker &&
                         std::all_of(stages.begin(), stages.end(), [&](std::int32_t v) {
                           return std::find(before->second.begin(), before->second.end(), v) !=
                                  before->second.end();
                         });
      if (!holds) {
        throw InputError(who, "the plan after it gives worker " + planner::to_string(id) +
                                  " a stage it does not hold");
      }
    }
    plans.push_back(std::move(then));
  }
  return plans;
}

}  // namespace detail

RunResult run_on_cpu(const planner::Schedule& schedule, const RunConfig& config, Peers* peers) {
  CpuBackend backend(config.pin_cpus);
  openblas_set_num_threads(1);  // one BLAS thread per worker thread
  return run_schedule(
      backend, schedule, config,
      [&](const planner::Schedule& plan) {
        require_cpu_placement(plan.workers.size());
        require_run_fits(plan, config.shape, config.iterations, kMaxCpuFlops);
      },
      peers);
}

}  // namespace recycle::executor
