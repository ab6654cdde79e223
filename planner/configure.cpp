#include "planner/configure.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

#include "core/error.hpp"
#include "planner/generators.hpp"
#include "planner/job_model.hpp"
#include "planner/pipeline_period.hpp"
#include "planner/timing/memory.hpp"

namespace recycle::planner {

namespace {

constexpr const char* kSource = "configure";

/// Divisors of `n` up to `most`, ascending.
std::vector<std::int64_t> divisors(std::int64_t n, std::int64_t most) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d <= n && d <= most; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

struct Candidate {
  profiles::ParallelConfig parallel;
  std::string schedule;
  Nanos bound = 0;
  std::int64_t index = 0;  ///< in the enumeration: ties rank in this order
};

/// Counts refusals by reason.
class Tally {
 public:
  void add(const std::string& reason, std::int64_t n = 1) { counts_[reason] += n; }
  [[nodiscard]] std::vector<Refusal> sorted() const {
    std::vector<Refusal> out;
    for (const auto& [reason, count] : counts_) out.push_back({reason, count});
    std::stable_sort(out.begin(), out.end(),
                     [](const Refusal& a, const Refusal& b) { return a.count > b.count; });
    return out;
  }

 private:
  std::map<std::string, std::int64_t> counts_;
};

/// Why a job model could not be made, from the field its error names.
std::string model_refusal(const InputError& e) {
  const std::string& where = e.where();
  const auto ends = [&](std::string_view field) { return where.ends_with(field); };
  if (ends("parallel.tp"))
    return "tp does not divide the model's heads, key/value heads or MLP width";
  if (ends("parallel.pp")) return "more virtual stages than the model has layers";
  if (e.problem().find("too large to represent") != std::string::npos) {
    return "too large: over 1e17 bytes or FLOPs per micro-batch and layer";
  }
  if (e.problem().find("2^39 bytes") != std::string::npos) {
    return "too large: a stage over 2^39 bytes of activations a micro-batch or 2^50 of state";
  }
  if (e.problem().find("in one schedule; the limit is") != std::string::npos) {
    return "more chunks in one schedule than the planners take (planner/language/work_limits.hpp)";
  }
  return e.problem();
}

/// The model of a candidate's job.
JobModel model_of(const ConfigureSpace& space, const Candidate& c) {
  profiles::Job job;
  job.source = kSource;
  job.model = space.model;
  job.gpu = space.gpu;
  job.parallel = c.parallel;
  job.schedule = c.schedule;
  return job_model(std::move(job));
}

/// The most a stage's worker is short of holding its state and one micro-batch; 0 when every
/// stage can.
Bytes shortfall(const JobModel& jm) {
  Bytes most = 0;
  for (std::int32_t s = 0; s < jm.layout.pp; ++s) {
    Bytes need = jm.model.kept_bytes(s);
    for (std::int32_t k = 0; k < jm.layout.interleave; ++k)
      need += jm.model.held_bytes(jm.layout.virtual_stage(s, k));
    most = std::max(most, need - jm.model.worker_memory);
  }
  return most;
}

/// A lower bound on the iteration time: every stage's worker runs F, I and W of each of its
/// chunks for m micro-batches. All but 2bw (whose step runs beside the next iteration) flush at
/// the optimizer barrier: between its last W and the next iteration's first F a worker runs its
/// gradient all-reduce and its step, and after the barrier its first F waits for the first
/// micro-batch's F on every virtual stage before its first chunk.
Nanos lower_bound(const JobModel& jm, const std::string& schedule) {
  const Layout& l = jm.layout;
  const CostModel& m = jm.model;
  Cluster ring = m.cluster;
  const bool alone = ring.pipelines_interchangeable();
  if (alone) ring.set_absent_ring_peers(l.dp - 1);
  const bool flushes = schedule != "2bw";
  Nanos most = 0;
  for (std::int32_t s = 0; s < l.pp; ++s) {
    Nanos busy = 0;
    if (flushes) {
      std::int32_t first = l.virtual_stage(s, 0);
      for (std::int32_t k = 1; k < l.interleave; ++k)
        first = std::min(first, l.virtual_stage(s, k));
      for (std::int32_t v = 0; v < first; ++v)
        busy += m.compute.virtual_stages[static_cast<std::size_t>(v)].forward;
    }
    Nanos work = 0;
    for (std::int32_t k = 0; k < l.interleave; ++k) {
      const StageCost& c =
          m.compute.virtual_stages[static_cast<std::size_t>(l.virtual_stage(s, k))];
      work += c.forward + c.backward_input + c.backward_weight;
    }
    busy += work * l.microbatches;
    if (flushes) {
      std::vector<WorkerId> peers;
      for (std::int32_t d = 0; d < (alone ? 1 : l.dp); ++d) peers.push_back({d, s});
      busy += ring.all_reduce_time(peers, m.gradient_bytes(s));
      if (!m.compute.optimizer.empty()) busy += m.compute.optimizer[static_cast<std::size_t>(s)];
    }
    most = std::max(most, busy);
  }
  return most;
}

void check_space(const ConfigureSpace& space) {
  if (space.gpus <= 0) throw InputError("--gpus", "expected a positive number of GPUs");
  if (space.global_batch <= 0) {
    throw InputError("--global-batch", "expected a positive number of samples");
  }
  if (space.top <= 0) throw InputError("--top", "expected at least 1 row");
  for (const std::string& s : space.schedules) {
    if (!is_schedule_name(s, fault_free_generator_names()))
      throw InputError("--schedules", unknown_schedule_message(s, fault_free_generator_names()));
  }
}

}  // namespace

std::string model_key(const JobModel& jm, const std::string& schedule) {
  std::string key = schedule;
  const auto put = [&key](std::int64_t x) {
    key.append(reinterpret_cast<const char*>(&x), sizeof x);
  };
  const Layout& l = jm.layout;
  const CostModel& m = jm.model;
  for (const std::int64_t x :
       {std::int64_t{l.dp}, std::int64_t{l.pp}, std::int64_t{l.interleave},
        std::int64_t{l.microbatches}, std::int64_t{l.placement == Placement::kV},
        std::int64_t{m.cluster.tensor_parallel()}, m.worker_memory,
        std::int64_t{m.optimizer_shards}, std::int64_t{m.optimizer_shard_copies}})
    put(x);
  for (const StageCost& c : m.compute.virtual_stages) {
    put(c.forward);
    put(c.backward_input);
    put(c.backward_weight);
  }
  for (const auto* v : {&m.activation_bytes, &m.output_bytes, &m.param_bytes, &m.state_bytes,
                        &m.optimizer_state_bytes}) {
    put(static_cast<std::int64_t>(v->size()));
    for (const Bytes b : *v) put(b);
  }
  for (const Nanos t : m.compute.optimizer) put(t);
  return key;
}

const std::vector<std::string>& configure_schedules() {
  static const std::vector<std::string> names = {"1f1b", "interleaved", "zb-h1", "zb-h2",
                                                 "zb-v", "dualpipe-v",  "2bw"};
  return names;
}

ConfigureResult configure(const ConfigureSpace& space) {
  check_space(space);
  const std::vector<std::string>& schedules =
      space.schedules.empty() ? configure_schedules() : space.schedules;
  const std::int64_t max_tp = std::min<std::int64_t>(
      space.max_tp > 0 ? space.max_tp : space.gpu.gpus_per_node, space.gpu.gpus_per_node);
  ConfigureResult result;
  Tally refused;
  Bytes least_shortfall = 0;
  std::vector<Candidate> candidates;
  std::int64_t index = 0;

  // Every configuration: a candidate with its bound, or a refusal.
  const auto consider = [&](Candidate c) {
    ++result.configurations;
    c.index = index++;
    std::optional<JobModel> jm;
    try {
      jm = model_of(space, c);
    } catch (const InputError& e) {
      refused.add(model_refusal(e));
      return;
    }
    if (runnable_microbatches(c.schedule, jm->layout, jm->layout.microbatches) !=
        jm->layout.microbatches) {
      refused.add("interleaved needs micro-batches in whole groups of pp");
      return;
    }
    if (const Bytes short_by = shortfall(*jm); short_by > 0) {
      refused.add("does not fit one micro-batch next to its state");
      const Bytes per_gpu = short_by / c.parallel.tp;
      least_shortfall = least_shortfall == 0 ? per_gpu : std::min(least_shortfall, per_gpu);
      return;
    }
    c.bound = lower_bound(*jm, c.schedule);
    candidates.push_back(std::move(c));
  };

  for (const std::int64_t tp : divisors(space.gpus, max_tp)) {
    for (const std::int64_t pp : divisors(space.gpus / tp, kMaxPp)) {
      const std::int64_t dp = space.gpus / tp / pp;
      if (dp > kMaxDp) {
        ++result.configurations;
        refused.add(
            "more data-parallel pipelines than the planners take (65,536; one per tp x pp "
            "x dp)");
        continue;
      }
      const profiles::ModelSpec& m = space.model;
      if (m.heads % tp == 0 && m.kv_heads % tp == 0 && m.ffn_hidden % tp == 0 && pp <= m.layers &&
          std::find(result.dp_choices.begin(), result.dp_choices.end(), dp) ==
              result.dp_choices.end()) {
        result.dp_choices.push_back(dp);
      }
      if (space.global_batch % dp != 0) {
        ++result.configurations;
        refused.add("dp does not divide the global batch (one per tp x pp x dp)");
        continue;
      }
      for (const std::int64_t mbs : divisors(space.global_batch / dp, space.max_microbatch_size)) {
        if (space.global_batch / dp / mbs > kMaxMicrobatches) {
          ++result.configurations;
          refused.add(
              "more micro-batches a pipeline than the planners take (65,536; one per tp x "
              "pp x dp x micro-batch size)");
          continue;
        }
        for (const std::string& schedule : schedules) {
          if (pp == 1 && schedule != "1f1b" &&
              std::find(schedules.begin(), schedules.end(), "1f1b") != schedules.end()) {
            continue;  // one stage: no pipeline to schedule, 1f1b's configuration again
          }
          std::vector<std::int32_t> chunks = {1};
          if (schedule == "interleaved") {
            chunks.clear();
            for (std::int32_t v = 2; v <= space.max_interleave; ++v) chunks.push_back(v);
          }
          for (const std::int32_t v : chunks) {
            for (const profiles::Recompute r : space.recompute) {
              for (const bool sp : tp > 1 ? space.sequence_parallel : std::vector<bool>{false}) {
                for (const ConfigureSpace::Optimizer optimizer :
                     dp > 1 ? space.optimizer
                            : std::vector<ConfigureSpace::Optimizer>{
                                  ConfigureSpace::Optimizer::kReplicated}) {
                  Candidate c;
                  c.parallel.tp = static_cast<std::int32_t>(tp);
                  c.parallel.pp = static_cast<std::int32_t>(pp);
                  c.parallel.dp = static_cast<std::int32_t>(dp);
                  c.parallel.interleave = v;
                  c.parallel.microbatch_size = mbs;
                  c.parallel.global_batch = space.global_batch;
                  c.parallel.recompute = r;
                  c.parallel.sequence_parallel = sp;
                  c.parallel.distributed_optimizer =
                      optimizer != ConfigureSpace::Optimizer::kReplicated;
                  c.parallel.shard_copies =
                      optimizer == ConfigureSpace::Optimizer::kShardedReplica ? 2 : 1;
                  c.parallel.dtype = space.dtype;
                  c.parallel.flash_attention = space.flash_attention;
                  c.schedule = schedule;
                  consider(std::move(c));
                }
              }
            }
          }
        }
      }
    }
  }

  // Timed in the order of their bounds; ties in the order enumerated.
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.bound != b.bound ? a.bound < b.bound : a.index < b.index;
  });
  struct Ranked {
    Configuration row;
    std::int64_t index = 0;  ///< in the enumeration
    std::string key;         ///< model_key
  };
  std::vector<Ranked> timed;
  const auto rank_less = [](const Ranked& a, const Ranked& b) {
    return a.row.iteration != b.row.iteration ? a.row.iteration < b.row.iteration
                                              : a.index < b.index;
  };
  const auto top = static_cast<std::size_t>(space.top);
  struct Timing {
    std::optional<PipelinePeriod> period;
    std::string refusal;
  };
  std::map<std::string, Timing> timings;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (space.progress && i % 64 == 0) {
      space.progress(static_cast<double>(i) / static_cast<double>(candidates.size()));
    }
    if (space.prune && timed.size() >= top && c.bound > timed[top - 1].row.iteration) {
      result.pruned = static_cast<std::int64_t>(candidates.size() - i);
      break;
    }
    const JobModel jm = model_of(space, c);
    const std::string key = model_key(jm, c.schedule);
    auto known = timings.find(key);
    const bool seen = known != timings.end();
    if (!seen) {
      Timing t;
      try {
        t.period = pipeline_period(jm.model, jm.layout, c.schedule, kSource, jm.layout.pp,
                                   jm.layout.microbatches, jm.layout.dp);
      } catch (const InputError& e) {
        t.refusal = e.problem().find("does not fit") != std::string::npos
                        ? "its schedule's peak memory does not fit"
                        : c.schedule + " does not take the layout";
      }
      ++result.timed;
      known = timings.emplace(key, std::move(t)).first;
    }
    const std::optional<PipelinePeriod>& period = known->second.period;
    if (!known->second.refusal.empty()) {
      refused.add(known->second.refusal);
      continue;
    }
    if (!period) {
      refused.add(c.schedule + " deadlocks");
      continue;
    }
    if (seen) {
      // The same model as a configuration ranked before it (or dropped as slower): one row.
      ++result.folded;
      const auto same =
          std::find_if(timed.begin(), timed.end(), [&](const Ranked& r) { return r.key == key; });
      if (same != timed.end()) same->row.alike.push_back(c.parallel);
      continue;
    }
    Configuration row;
    row.parallel = jm.job.parallel;
    row.schedule = c.schedule;
    row.iteration = period->period;
    row.lower_bound = c.bound;
    const Seconds seconds = to_seconds(period->period);
    row.samples_per_s = static_cast<double>(space.global_batch) / seconds;
    row.mfu = jm.synthesis.mfu(seconds);
    row.peak_per_gpu = period->peak_bytes / c.parallel.tp;
    row.memory_per_gpu = space.gpu.memory_bytes;
    timed.push_back({std::move(row), c.index, key});
    std::sort(timed.begin(), timed.end(), rank_less);
    if (timed.size() > top) timed.pop_back();
  }
  for (Ranked& r : timed) result.ranked.push_back(std::move(r.row));
  std::sort(result.dp_choices.begin(), result.dp_choices.end());
  result.refused = refused.sorted();
  result.least_shortfall_per_gpu = least_shortfall;
  if (space.progress) space.progress(1.0);
  return result;
}

}  // namespace recycle::planner
