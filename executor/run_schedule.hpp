// The runtime's one definition, for every backend: how a worker walks its lowered action list,
// where its inputs come from, where its outputs go (the schedule's routes), how the stage's
// replicas reduce their gradients, and how a kill is found, dropped and recovered from
// (executor/runtime.hpp says what each of these does). A backend supplies only the arithmetic and
// the data movement, each operation finished when it returns so that the runtime's clock brackets
// it:
//
//   struct Backend {
//     using Tensor;  // an activation, a gradient, a stage's parameters (movable)
//     using Stage;   // one virtual stage's parameters and gradients (copyable: snapshots)
//     using Chunk;   // what one micro-batch keeps from its F until its W
//     using Reduce;  // an all-reduce over a stage's live replicas
//     void enter(std::size_t w);  // on worker w's thread, before it runs
//     void connect(std::size_t from, std::size_t to);  // before any thread runs: w `from` will
//                                                      // SEND to w `to`
//     Stage make_stage(std::size_t w, const StageShape&, std::int32_t v, std::uint64_t seed);
//     void load(std::vector<std::vector<float>> inputs,
//               std::vector<std::vector<float>> targets);  // before the clock starts
//     const Tensor& input(std::size_t w, std::size_t slot);   // the first stage's input
//     const Tensor& target(std::size_t w, std::size_t slot);  // the last stage's target
//     Tensor send(Tensor data, std::size_t from, std::size_t to);  // the SEND's transfer
//     double loss(std::size_t w, const Tensor& out, const Tensor& target, Tensor& gradient);
//     std::unique_ptr<Reduce> make_reduce(std::vector<std::size_t> ranks, Abort&);
//     std::vector<float> download(const Tensor&);
//     // Across processes (a multi-process run, executor/peers.hpp) data travels as host floats:
//     std::vector<float> into_host(Tensor data);  // a SEND's data, for another process
//     Tensor from_host(std::size_t w, std::vector<float> data);  // another's, for worker w
//     void on_host(Tensor& data, F f);  // f(std::vector<float>&) on `data`'s contents, in place
//   };
//   Stage: forward(const Tensor&, Chunk&) -> Tensor; backward_input(const Tensor&, Chunk&) ->
//   Tensor; backward_weight(const Chunk&); step(learning_rate, microbatches); gradients() ->
//   Tensor&; parameters() -> const Tensor&.
//   Reduce: all_reduce(rank, Tensor&, what).
// Worker w is the index of the worker in the run's first schedule (kept across kills), ranks of a
// Reduce are given as such indices in rank order. With peers, the gradient all-reduces and the
// optimizer barrier go by message (executor/message_reduce.hpp) through host mailboxes of their
// own, and a SEND to another process's worker through the peers; the cpu backend's tensors are
// host floats already, so its into_host, from_host and on_host move nothing.
#pragma once

#include <map>
#include <vector>

#include "core/error.hpp"
#include "executor/run_segment.hpp"
#include "executor/runtime.hpp"
#include "planner/language/schedule.hpp"

namespace recycle::executor {

/// Runs `schedule` on `backend` (see the top of this file); run_on_cpu's and run_on_cuda's one
/// body. `check` is called with each of the run's lowered plans before anything runs (the
/// backend's limits: memory, placement).
template <class B, class Check>
RunResult run_schedule(B& backend, const planner::Schedule& schedule, const RunConfig& config,
                       Check&& check, Peers* peers = nullptr) {
  using namespace detail;
  if (config.iterations < 1) throw InputError("--iterations", "must be at least 1");
  const std::vector<planner::Schedule> plans = checked_plans(schedule, config);
  for (const planner::Schedule& plan : plans) check(plan);
  const planner::Layout& layout = plans.front().layout;

  RunState<B> run(backend, config, peers, layout);
  const std::size_t slots = static_cast<std::size_t>(config.iterations) *
                            static_cast<std::size_t>(layout.dp) *
                            static_cast<std::size_t>(layout.microbatches);
  run.processed.assign(slots, 0);
  run.losses.assign(slots, 0.0);
  run.iteration_end.assign(static_cast<std::size_t>(config.iterations), 0);
  {
    // Data loading is not part of what is timed.
    std::vector<std::vector<float>> inputs, targets;
    for (std::int32_t it = 0; it < config.iterations; ++it) {
      for (std::int32_t owner = 0; owner < layout.dp; ++owner) {
        for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
          inputs.push_back(synthetic_input(config.shape, config.seed, it, owner, mb));
          targets.push_back(synthetic_target(config.shape, config.seed, it, owner, mb));
        }
      }
    }
    backend.load(std::move(inputs), std::move(targets));
  }
  run.params.resize(static_cast<std::size_t>(layout.workers()));
  run.snapshots.resize(static_cast<std::size_t>(layout.workers()));
  RunResult result;
  std::map<planner::WorkerId, std::size_t> index;
  const auto held = stages_held(plans.front());
  for (const auto& [id, stages] : held) {
    const std::size_t w = result.workers.size();
    index[id] = w;
    result.workers.emplace_back().id = id;
    if (peers != nullptr && !peers->here(run.flat(id), static_cast<std::size_t>(layout.workers())))
      continue;
    for (const std::int32_t v : stages)
      run.params[run.flat(id)].emplace(v, backend.make_stage(w, config.shape, v, config.seed));
  }

  if (peers != nullptr) peers->barrier();  // one start for every process's clock
  run.start = Clock::now();
  std::int32_t next = 0;
  for (std::size_t segment = 0; next < config.iterations; ++segment) {
    const Kill* kill = segment < config.kills.size() ? &config.kills[segment] : nullptr;
    result.segment_start.push_back(next);
    next = run_segment(run, plans[segment], static_cast<std::int32_t>(segment), next, kill, index,
                       result);
    if (next < config.iterations) result.recoveries.back().resume_ns = run.now_ns();
  }
  // A kill strikes in its iteration, which is never before the previous kill's resumption.
  RECYCLE_ASSERT(result.segment_start.size() == plans.size(), "a kill did not strike");

  for (WorkerRun& w : result.workers) {
    if (w.killed) continue;
    for (auto& [v, p] : run.params[run.flat(w.id)])
      w.parameters.emplace_back(v, backend.download(p.parameters()));
  }
  if (peers != nullptr) {
    std::vector<bool> mine;
    for (const WorkerRun& w : result.workers)
      mine.push_back(peers->here(run.flat(w.id), static_cast<std::size_t>(layout.workers())));
    peers->collect(result, mine, run.processed, run.losses, run.iteration_end);
    if (!peers->root()) return result;  // the root checks and reports the whole run
  }
  for (std::int32_t it = 0; it < config.iterations; ++it) {
    double sum = 0;
    for (std::int32_t owner = 0; owner < layout.dp; ++owner) {
      for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
        const std::size_t slot = run.slot(it, owner, mb);
        if (run.processed[slot] != 1) {
          throw std::runtime_error("micro-batch " + std::to_string(mb) + " of pipeline " +
                                   std::to_string(owner) + " was processed " +
                                   std::to_string(run.processed[slot]) + " times in iteration " +
                                   std::to_string(it));
        }
        sum += run.losses[slot];
        result.microbatches_processed += run.processed[slot];
      }
    }
    result.loss.push_back(sum / static_cast<double>(layout.dp * layout.microbatches));
  }
  result.iteration_end_ns = run.iteration_end;
  return result;
}

}  // namespace recycle::executor
