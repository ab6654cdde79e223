#include "planner/generators.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <utility>

#include "core/error.hpp"
#include "planner/candidates.hpp"
#include "planner/language/semantics.hpp"
#include "planner/language/work_limits.hpp"
#include "planner/list_scheduler.hpp"
#include "planner/timing/memory.hpp"

namespace recycle::planner {

namespace {

Action make(ActionType type, std::int32_t virtual_stage, std::int32_t microbatch) {
  return Action{type, virtual_stage, microbatch, 0};
}

void require_single_chunk(const Layout& layout, std::string_view name) {
  if (layout.interleave != 1) {
    throw InputError("--interleave", "only the interleaved schedule splits a stage into chunks; " +
                                         std::string(name) + " needs --interleave 1");
  }
}

bool is_v_shaped(std::string_view name) {
  return name == "zb-v" || name == "dualpipe-v";
}

void require_v(const Layout& layout, std::string_view name) {
  if (layout.interleave != 2 || layout.placement != Placement::kV) {
    throw InputError("--interleave", std::string(name) +
                                         " runs two chunks per worker placed in a V; give "
                                         "--interleave 2 or leave it out");
  }
}

void require_layout(const Layout& layout) {
  if (layout.pp < 1 || layout.pp > kMaxPp) {
    throw InputError("--pp", "expected 1 to " + std::to_string(kMaxPp) + " stages");
  }
  if (layout.dp < 1 || layout.dp > kMaxDp) {
    throw InputError("--dp", "expected 1 to " + std::to_string(kMaxDp) + " pipelines");
  }
  if (layout.microbatches < 1 || layout.microbatches > kMaxMicrobatches) {
    throw InputError("--microbatches", "expected 1 to " + std::to_string(kMaxMicrobatches));
  }
  if (layout.interleave < 1 || layout.interleave > kMaxInterleave) {
    throw InputError("--interleave", "expected 1 to " + std::to_string(kMaxInterleave) + " chunks");
  }
  require_chunks(layout, "--dp x --pp x --interleave x --microbatches");
}

}  // namespace

std::vector<Action> gpipe_order(const Layout& layout, std::int32_t stage) {
  std::vector<Action> order;
  order.reserve(static_cast<std::size_t>(2 * layout.microbatches));
  for (std::int32_t mb = 0; mb < layout.microbatches; ++mb)
    order.push_back(make(ActionType::kForward, stage, mb));
  for (std::int32_t mb = 0; mb < layout.microbatches; ++mb)
    order.push_back(make(ActionType::kBackward, stage, mb));
  return order;
}

std::vector<Action> one_f_one_b_order(const Layout& layout, std::int32_t stage) {
  const std::int32_t m = layout.microbatches;
  const std::int32_t warmup = std::min(layout.pp - stage - 1, m);
  std::vector<Action> order;
  order.reserve(static_cast<std::size_t>(2 * m));
  for (std::int32_t mb = 0; mb < warmup; ++mb)
    order.push_back(make(ActionType::kForward, stage, mb));
  for (std::int32_t k = 0; k < m - warmup; ++k) {
    order.push_back(make(ActionType::kForward, stage, warmup + k));
    order.push_back(make(ActionType::kBackward, stage, k));
  }
  for (std::int32_t mb = m - warmup; mb < m; ++mb)
    order.push_back(make(ActionType::kBackward, stage, mb));
  return order;
}

std::vector<Action> two_bw_order(const Layout& layout, std::int32_t stage) {
  // PipeDream-2BW (Narayanan et al., ICML '21, §3.1): 1F1B without a flush. Stage s runs each
  // forward followed by the backward of the micro-batch d = pp - 1 - s behind it, across batches:
  // the list of one iteration starts with the forwards of its first d micro-batches paired with
  // the previous iteration's last d backwards (lag 1), after which that iteration's gradients are
  // all-reduced and the stage steps; the last stage (d = 0) steps after its own last backward.
  const std::int32_t m = layout.microbatches;
  const std::int32_t behind = layout.pp - 1 - stage;
  RECYCLE_ASSERT(behind <= m, "2bw needs at least pp - 1 micro-batches");
  std::vector<Action> order;
  order.reserve(static_cast<std::size_t>(2 * m + 2));
  const auto step = [&](std::int32_t lag) {
    for (const ActionType type : {ActionType::kReduceGrad, ActionType::kOptimizer}) {
      Action a{type, stage, -1, 0};
      a.lag = lag;
      order.push_back(a);
    }
  };
  for (std::int32_t k = 0; k < m; ++k) {
    order.push_back(make(ActionType::kForward, stage, k));
    const std::int32_t j = k - behind;
    Action backward = make(ActionType::kBackward, stage, j >= 0 ? j : m + j);
    backward.lag = j >= 0 ? 0 : 1;
    order.push_back(backward);
    if (j == -1) step(1);
  }
  if (behind == 0) step(0);
  return order;
}

std::vector<Action> interleaved_order(const Layout& layout, std::int32_t stage) {
  // Megatron-LM's forward_backward_pipelining_with_interleaving: the k-th forward step of a worker
  // runs chunk (k mod pp*V) / pp of micro-batch (k / pp*V) * pp + k mod pp; backward steps walk
  // the chunks in reverse.
  const std::int32_t pp = layout.pp;
  const std::int32_t v = layout.interleave;
  const std::int32_t total = layout.microbatches * v;
  const std::int32_t group = pp * v;
  std::int32_t warmup = (pp - stage - 1) * 2 + (v - 1) * pp;
  if (layout.microbatches == pp) warmup = total;
  warmup = std::min(warmup, total);
  const auto microbatch = [&](std::int32_t k) { return (k / group) * pp + k % pp; };
  const auto forward = [&](std::int32_t k) {
    return make(ActionType::kForward, ((k % group) / pp) * pp + stage, microbatch(k));
  };
  const auto backward = [&](std::int32_t k) {
    return make(ActionType::kBackward, (v - 1 - (k % group) / pp) * pp + stage, microbatch(k));
  };
  std::vector<Action> order;
  order.reserve(static_cast<std::size_t>(2 * total));
  for (std::int32_t k = 0; k < warmup; ++k) order.push_back(forward(k));
  for (std::int32_t k = 0; k < total - warmup; ++k) {
    order.push_back(forward(warmup + k));
    order.push_back(backward(k));
  }
  for (std::int32_t k = total - warmup; k < total; ++k) order.push_back(backward(k));
  return order;
}

std::vector<Action> zb_h1_order(const Layout& layout, std::int32_t stage) {
  // 1F1B's order of F and I; stage s holds back its first s Ws, so that the I of the next
  // micro-batch is not delayed behind a W while upstream stages wait for it. The held-back Ws
  // fill the cool-down. Peak activations on stage s: (pp - s - 1) + s + 1 = pp, 1F1B's stage-0
  // peak.
  const std::int32_t m = layout.microbatches;
  const std::int32_t warmup = std::min(layout.pp - stage - 1, m);
  std::vector<Action> order;
  order.reserve(static_cast<std::size_t>(3 * m));
  std::int32_t next_w = 0;
  for (std::int32_t mb = 0; mb < warmup; ++mb)
    order.push_back(make(ActionType::kForward, stage, mb));
  for (std::int32_t k = 0; k < m - warmup; ++k) {
    order.push_back(make(ActionType::kForward, stage, warmup + k));
    order.push_back(make(ActionType::kBackwardInput, stage, k));
    if (k >= stage) order.push_back(make(ActionType::kBackwardWeight, stage, next_w++));
  }
  for (std::int32_t mb = m - warmup; mb < m; ++mb) {
    order.push_back(make(ActionType::kBackwardInput, stage, mb));
    order.push_back(make(ActionType::kBackwardWeight, stage, next_w++));
  }
  while (next_w < m) order.push_back(make(ActionType::kBackwardWeight, stage, next_w++));
  return order;
}

std::vector<Action> zb_v_order(const Layout& layout, std::int32_t stage) {
  // Zero Bubble's ZB-V (Qi et al., ICLR 2024, section 6). Each stage holds chunk 0 of the model on
  // the way down (virtual stage s) and chunk 1 on the way back up (2pp - 1 - s), so a micro-batch
  // enters and leaves on stage 0. The order is built for n = max(2pp - 1, M) micro-batches, the
  // fewest that fill the V; those past M are left out. Per stage s:
  //  warm-up    2(pp - s) - 1 chunk-0 forwards; s pairs (F1, F0); pp - s triples (F1, I1, W1)
  //  steady     (F0 while any are left), I0, W0, F1, I1, W1, until every forward has run
  //  cool-down  s pairs (I0, I1) with their Ws held back; pp - s pairs (I0, W0); then the held-back
  //             W1s and W0s. Peak activations: 2pp chunks of half a stage, 1F1B's pp micro-batches.
  const std::int32_t p = layout.pp;
  const std::int32_t n = std::max(2 * p - 1, layout.microbatches);
  const std::array<std::int32_t, 2> v = {layout.virtual_stage(stage, 0),
                                         layout.virtual_stage(stage, 1)};
  std::array<std::array<std::int32_t, 2>, 3> next{};  // [F, I, W][chunk]: the next micro-batch
  std::vector<Action> order;
  order.reserve(static_cast<std::size_t>(6 * layout.microbatches));
  const auto emit = [&](ActionType type, std::size_t chunk) {
    const std::int32_t mb = next[static_cast<std::size_t>(split_index(type))][chunk]++;
    if (mb < layout.microbatches) order.push_back(make(type, v[chunk], mb));
  };
  const auto count = [&](ActionType type, std::size_t chunk) {
    return next[static_cast<std::size_t>(split_index(type))][chunk];
  };
  using enum ActionType;
  // `times` repetitions of one step of the order: its (type, chunk) pairs in turn.
  const auto phase = [&](std::int32_t times,
                         std::initializer_list<std::pair<ActionType, std::size_t>> step) {
    for (std::int32_t k = 0; k < times; ++k)
      for (const auto& [type, chunk] : step) emit(type, chunk);
  };
  phase(2 * (p - stage) - 1, {{kForward, 0}});
  phase(stage, {{kForward, 1}, {kForward, 0}});
  phase(p - stage, {{kForward, 1}, {kBackwardInput, 1}, {kBackwardWeight, 1}});
  while (count(kForward, 1) < count(kForward, 0) || count(kForward, 0) < n) {
    if (count(kForward, 0) < n) emit(kForward, 0);
    phase(1, {{kBackwardInput, 0},
              {kBackwardWeight, 0},
              {kForward, 1},
              {kBackwardInput, 1},
              {kBackwardWeight, 1}});
  }
  phase(stage, {{kBackwardInput, 0}, {kBackwardInput, 1}});
  phase(p - stage, {{kBackwardInput, 0}, {kBackwardWeight, 0}});
  while (count(kBackwardWeight, 1) < count(kBackwardInput, 1)) emit(kBackwardWeight, 1);
  while (count(kBackwardWeight, 0) < count(kBackwardInput, 0)) emit(kBackwardWeight, 0);
  return order;
}

std::vector<Action> dualpipe_v_order(const Layout& layout, std::int32_t stage) {
  // DualPipe-V: DeepSeek-V3's DualPipe (arXiv 2412.19437) folded onto one V of pp stages, as
  // torch.distributed.pipelining ships it (ScheduleDualPipeV). Chunk 0 runs down the V (virtual
  // stage s), chunk 1 back up (2pp - 1 - s). Its steady state pairs a forward of one chunk with a
  // full backward of the other (DualPipe overlaps the pair's communication with its computation;
  // on one compute stream they run back to back). Per stage s, with r = pp - s - 1:
  //  1. 2r chunk-0 forwards        2. s + 1 pairs (F0, F1)       3. r triples (I1, W, F1)
  //  4. M - 2pp + s + 1 rounds of (F0, B1), (F1, B0)
  //  5. r rounds of B1, (F1, B0)   6. s + 1 pairs (B1, B0), turning into Is (their Ws held back)
  //     from the middle pair on    7. r pairs (W, B0 or I0)      8. the s + 1 Ws left
  // A W always finishes the oldest I still waiting for one.
  const std::int32_t p = layout.pp;
  const std::int32_t r = p - stage - 1;
  const std::array<std::int32_t, 2> v = {layout.virtual_stage(stage, 0),
                                         layout.virtual_stage(stage, 1)};
  std::array<std::int32_t, 2> forwards{}, backwards{};      // the next micro-batch, per chunk
  std::vector<std::pair<std::int32_t, std::int32_t>> held;  // Is waiting for their W, oldest first
  std::size_t next_held = 0;
  std::vector<Action> order;
  order.reserve(static_cast<std::size_t>(6 * layout.microbatches));
  using enum ActionType;
  const auto forward = [&](std::size_t chunk) {
    order.push_back(make(kForward, v[chunk], forwards[chunk]++));
  };
  const auto backward = [&](std::size_t chunk, bool split) {
    const std::int32_t mb = backwards[chunk]++;
    order.push_back(make(split ? kBackwardInput : kBackward, v[chunk], mb));
    if (split) held.emplace_back(v[chunk], mb);
  };
  const auto weight = [&] {
    if (next_held == held.size()) return;
    const auto [virtual_stage, mb] = held[next_held++];
    order.push_back(make(kBackwardWeight, virtual_stage, mb));
  };
  for (std::int32_t k = 0; k < 2 * r; ++k) forward(0);
  for (std::int32_t k = 0; k <= stage; ++k) {
    forward(0);
    forward(1);
  }
  for (std::int32_t k = 0; k < r; ++k) {
    backward(1, true);
    weight();
    forward(1);
  }
  for (std::int32_t k = 0; k < layout.microbatches - 2 * p + stage + 1; ++k) {
    forward(0);
    backward(1, false);
    forward(1);
    backward(0, false);
  }
  for (std::int32_t k = 0; k < r; ++k) {
    backward(1, false);
    forward(1);
    backward(0, false);
  }
  bool split = false;
  for (std::int32_t k = 0; k <= stage; ++k) {
    if (k == (stage + 1) / 2 && stage % 2 == 1) split = true;
    backward(1, split);
    if (k == (stage + 1) / 2 && stage % 2 == 0) split = true;
    backward(0, split);
  }
  for (std::int32_t k = 0; k < r; ++k) {
    weight();
    backward(0, split);
  }
  for (std::int32_t k = 0; k <= stage; ++k) weight();
  return order;
}

std::vector<std::vector<std::vector<Action>>> base_orders(std::string_view name,
                                                          const Layout& layout) {
  GeneratorOptions options;
  options.layout = layout;
  options.layout.dp = 1;
  const Schedule base = generate_fault_free(name, options);
  std::vector<std::vector<Action>> split;
  for (const WorkerSchedule& w : base.workers) {
    std::vector<Action>& order = split.emplace_back();
    for (const Action& a : w.actions) {
      if (a.type != ActionType::kBackward) {
        order.push_back(a);
        continue;
      }
      for (const ActionType type : {ActionType::kBackwardInput, ActionType::kBackwardWeight}) {
        Action half = a;  // its iteration (lag) kept
        half.type = type;
        order.push_back(half);
      }
    }
  }
  std::vector<std::vector<std::vector<Action>>> out{std::move(split)};
  if (canonical_schedule_name(name) == "1f1b") {
    std::vector<std::vector<Action>>& h1 = out.emplace_back();
    for (std::int32_t s = 0; s < layout.pp; ++s) h1.push_back(zb_h1_order(layout, s));
  }
  return out;
}

std::vector<std::int32_t> held_peaks(const std::vector<std::vector<Action>>& orders) {
  std::vector<std::int32_t> out;
  for (const std::vector<Action>& order : orders)
    out.push_back(peak_held(order.data(), order.data() + order.size()));
  return out;
}

std::vector<std::vector<Action>> zb_h2_orders(const Layout& layout, const CostModel& model,
                                              std::vector<std::int32_t> memory_limit,
                                              bool staggered_optimizer, const RunOptions& run) {
  Schedule skeleton;
  skeleton.layout = layout;
  skeleton.layout.dp = 1;  // every pipeline runs the same lists
  skeleton.staggered_optimizer = staggered_optimizer;
  OrderPlanOptions options;
  options.memory_limit = std::move(memory_limit);
  options.fault_free_orders = base_orders("1f1b", skeleton.layout);
  options.run = run;
  std::vector<std::vector<Action>> out;
  for (WorkerSchedule& w : plan_orders(skeleton, model, options).workers)
    out.push_back(std::move(w.actions));
  return out;
}

Layout layout_for(std::string_view name, Layout layout) {
  if (!is_v_shaped(name)) return layout;
  if (layout.interleave == 1) layout.interleave = 2;
  if (layout.interleave == 2) layout.placement = Placement::kV;
  return layout;
}

std::int32_t runnable_microbatches(std::string_view name, const Layout& layout,
                                   std::int32_t microbatches) {
  if (name != "interleaved") return microbatches;
  return (microbatches + layout.pp - 1) / layout.pp * layout.pp;
}

void require_runs(std::string_view given, const Layout& layout) {
  const std::string_view name = canonical_schedule_name(given);
  if (!is_schedule_name(name, fault_free_generator_names()))
    throw InputError("--schedule", unknown_schedule_message(name, fault_free_generator_names()));
  require_layout(layout);
  if (layout.placement != Placement::kLoop && !is_v_shaped(name)) {
    throw InputError("--schedule", std::string(name) +
                                       " places its chunks in a loop (virtual stage v on stage v "
                                       "% pp); only zb-v and dualpipe-v place them in a V");
  }
  if (name == "interleaved") {
    if (layout.interleave < 2) {
      throw InputError("--interleave",
                       "the interleaved schedule needs at least 2 chunks per worker");
    }
    if (runnable_microbatches(name, layout, layout.microbatches) != layout.microbatches) {
      throw InputError("--microbatches", "the interleaved schedule needs a multiple of --pp (" +
                                             std::to_string(layout.pp) + "), got " +
                                             std::to_string(layout.microbatches));
    }
  } else if (is_v_shaped(name)) {
    require_v(layout, name);
    if (name == "dualpipe-v" && layout.microbatches < 2 * layout.pp) {
      throw InputError("--microbatches",
                       "dualpipe-v needs at least 2 x --pp (" + std::to_string(2 * layout.pp) +
                           ") micro-batches, got " + std::to_string(layout.microbatches));
    }
  } else {
    require_single_chunk(layout, name);
    if (name == "2bw" && layout.microbatches < layout.pp - 1) {
      throw InputError("--microbatches",
                       "2bw needs at least --pp - 1 (" + std::to_string(layout.pp - 1) +
                           ") micro-batches, so that a stage's backwards trail its forwards by "
                           "at most one batch and two weight versions suffice; got " +
                           std::to_string(layout.microbatches));
    }
  }
}

Schedule generate_fault_free(std::string_view given, const GeneratorOptions& options) {
  const std::string_view name = canonical_schedule_name(given);
  const Layout& layout = options.layout;
  require_runs(name, layout);
  std::vector<std::vector<Action>> stage_orders;
  stage_orders.reserve(static_cast<std::size_t>(layout.pp));
  if (name == "zb-h2") {
    if (options.memory_limit && *options.memory_limit < 1) {
      throw InputError("--memory-limit", "expected at least 1 micro-batch");
    }
    CostModel model = options.model;
    if (model.compute.virtual_stages.empty())
      model.compute = Costs::uniform(layout.virtual_stages(), {1, 1, 1});
    stage_orders = zb_h2_orders(
        layout, model, planning_limits(model, layout, options.memory_limit, 2 * layout.pp - 1),
        options.staggered_optimizer, options.run);
  }
  for (std::int32_t s = 0; s < layout.pp && name != "zb-h2"; ++s) {
    if (name == "gpipe") {
      stage_orders.push_back(gpipe_order(layout, s));
    } else if (name == "1f1b") {
      stage_orders.push_back(one_f_one_b_order(layout, s));
    } else if (name == "interleaved") {
      stage_orders.push_back(interleaved_order(layout, s));
    } else if (name == "2bw") {
      stage_orders.push_back(two_bw_order(layout, s));
    } else if (name == "zb-h1") {
      stage_orders.push_back(zb_h1_order(layout, s));
    } else if (name == "zb-v") {
      stage_orders.push_back(zb_v_order(layout, s));
    } else {
      RECYCLE_ASSERT(name == "dualpipe-v", "require_runs knows every generator");
      stage_orders.push_back(dualpipe_v_order(layout, s));
    }
  }

  Schedule schedule;
  schedule.generator = std::string(name);
  schedule.layout = layout;
  schedule.staggered_optimizer = options.staggered_optimizer || name == "2bw";
  schedule.weight_versions = name == "2bw" ? 2 : 1;
  schedule.workers.reserve(static_cast<std::size_t>(layout.workers()));
  for (std::int32_t d = 0; d < layout.dp; ++d) {
    for (std::int32_t s = 0; s < layout.pp; ++s) {
      WorkerSchedule worker{{d, s}, stage_orders[static_cast<std::size_t>(s)]};
      for (Action& a : worker.actions) a.owner = d;
      schedule.workers.push_back(std::move(worker));
    }
  }
  return schedule;
}

}  // namespace recycle::planner
