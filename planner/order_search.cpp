#include "planner/order_search.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include "core/error.hpp"
#include "planner/language/execution_graph.hpp"
#include "planner/language/semantics.hpp"
#include "planner/timing/cost_graph.hpp"

namespace recycle::planner {

namespace {

// The search's constants, tuned on the optimality-gap instances (tests/planner/exact_planner_test):
constexpr std::int64_t kTenure = 20;  ///< iterations a moved action stays tabu, plus workers / 4
constexpr std::int64_t kStall = 50;  ///< iterations without a better schedule before the next start
constexpr std::int32_t kShiftReach = 4;  ///< a critical action moves up to this many places
constexpr std::int32_t kExchangeReach =
    12;  ///< or trades places with an action of its kind this near

/// Lexicographic: the period; the first iteration's makespan; the length of the critical path (a
/// schedule is one move closer to a shorter period when fewer actions lie on it); the sum of end
/// times (earlier work leaves room later).
struct Score {
  Nanos period = 0;
  Nanos makespan = 0;
  std::int64_t critical = 0;
  Nanos total_end = 0;
  friend bool operator<(const Score& a, const Score& b) {
    return std::tie(a.period, a.makespan, a.critical, a.total_end) <
           std::tie(b.period, b.makespan, b.critical, b.total_end);
  }
};

/// Shift: take the action at `from` on `worker` and put it at `to` (a swap when they are
/// neighbours). Exchange: the actions at `from` and `to` trade places.
struct Move {
  std::int32_t worker = 0;
  std::int32_t from = 0;
  std::int32_t to = 0;
  bool exchange = false;
};

class Search {
 public:
  Search(const OrderSearchInput& in, const std::vector<WorkerSchedule>& first)
      : in_(in), layout_(in.skeleton->layout) {
    schedule_ = *in.skeleton;
    schedule_.workers = first;
    GraphOptions options;
    options.staggered_optimizer = schedule_.staggered_optimizer;
    graph_.emplace(timed_graph(schedule_, *in.model, options));
    const auto nodes = static_cast<std::size_t>(graph_->nodes());
    compute_.assign(nodes, 0);
    kind_.assign(nodes, -1);
    memory_.assign(nodes, 0);
    node_of_.assign(static_cast<std::size_t>(layout_.dp) *
                        static_cast<std::size_t>(layout_.virtual_stages()) *
                        static_cast<std::size_t>(layout_.microbatches) * 3,
                    -1);
    for (std::int32_t w = 0; w < graph_->workers(); ++w) {
      const auto& actions = schedule_.workers[static_cast<std::size_t>(w)].actions;
      limit_.push_back(in.memory_limit.at(
          static_cast<std::size_t>(schedule_.workers[static_cast<std::size_t>(w)].id.stage)));
      for (std::size_t i = 0; i < actions.size(); ++i) {
        const Action& a = actions[i];
        const std::int32_t k = kind(a.type);
        RECYCLE_ASSERT(k >= 0, "order search takes F, I and W actions only");
        const auto n = static_cast<std::size_t>(graph_->node(w, static_cast<std::int32_t>(i)));
        compute_[n] = 1;
        kind_[n] = k;
        memory_[n] = held_delta(a.type);
        node_of_[key(a, k)] = static_cast<std::int32_t>(n);
      }
    }
    orders_.resize(static_cast<std::size_t>(graph_->workers()));
    critical_.assign(nodes, 0);
  }

  /// Node visits one evaluation costs.
  [[nodiscard]] std::int64_t visits(std::int32_t iterations) const {
    return static_cast<std::int64_t>(graph_->nodes()) * (iterations + 1);
  }

  /// Searches from `start` until kStall iterations bring nothing better, `lower_bound` is reached
  /// or `budget` (in node visits) runs out. Returns the best orders found and their score.
  std::pair<Score, std::vector<std::vector<std::int32_t>>> run(
      const std::vector<WorkerSchedule>& start, Nanos lower_bound, std::int64_t& budget) {
    load(start);
    const auto initial = evaluate(budget);
    RECYCLE_ASSERT(initial.has_value(), "order search: the starting orders deadlock");
    Score current = *initial;
    Score best = current;
    std::vector<std::vector<std::int32_t>> best_orders = orders_;
    // Tabu: an action moved recently may not move again for `tenure` iterations, unless the move
    // beats the best schedule so far. When every move is tabu, the best of them is taken.
    std::vector<std::int64_t> tabu_until(static_cast<std::size_t>(graph_->nodes()), 0);
    const auto tenure = kTenure + static_cast<std::int64_t>(orders_.size() / 4);
    std::vector<Move> moves;
    std::int64_t last_gain = 0;
    for (std::int64_t iteration = 1;
         best.period > lower_bound && budget > 0 && iteration - last_gain <= kStall; ++iteration) {
      neighbourhood(moves);
      bool found = false, any = false;
      Score chosen{}, fallback_score{};
      Move pick{}, fallback{};
      for (const Move& mv : moves) {
        if (budget <= 0) break;
        const std::int32_t moved =
            orders_[static_cast<std::size_t>(mv.worker)][static_cast<std::size_t>(mv.from)];
        apply(mv);
        if (within_memory(mv.worker)) {
          if (const auto score = evaluate(budget)) {
            if (!any || *score < fallback_score) {
              any = true;
              fallback_score = *score;
              fallback = mv;
            }
            const bool allowed = tabu_until[static_cast<std::size_t>(moved)] < iteration ||
                                 score->period < best.period;
            if (allowed && (!found || *score < chosen)) {
              found = true;
              chosen = *score;
              pick = mv;
            }
          }
        }
        undo(mv);
      }
      if (!any) break;
      if (!found) pick = fallback;
      tabu_until[static_cast<std::size_t>(
          orders_[static_cast<std::size_t>(pick.worker)][static_cast<std::size_t>(pick.from)])] =
          iteration + tenure;
      apply(pick);
      current = *evaluate(budget);  // also marks the critical actions of the chosen schedule
      if (current < best) {
        best = current;
        best_orders = orders_;
        last_gain = iteration;
      }
    }
    return {best, std::move(best_orders)};
  }

  std::vector<WorkerSchedule> to_workers(
      const std::vector<std::vector<std::int32_t>>& orders) const {
    std::vector<WorkerSchedule> out;
    out.reserve(orders.size());
    for (std::size_t w = 0; w < orders.size(); ++w) {
      const WorkerSchedule& ws = schedule_.workers[w];
      WorkerSchedule copy{ws.id, {}};
      copy.actions.reserve(orders[w].size());
      for (const std::int32_t n : orders[w])
        copy.actions.push_back(ws.actions[static_cast<std::size_t>(graph_->position(n).index)]);
      out.push_back(std::move(copy));
    }
    return out;
  }

  /// The steady state of `start` as it is.
  std::optional<SteadyState> steady(const std::vector<WorkerSchedule>& start) {
    load(start);
    return steady_state(*graph_);
  }
  /// The score of `start`, charged to `budget`; nullopt if it deadlocks.
  std::optional<Score> score(const std::vector<WorkerSchedule>& start, std::int64_t& budget) {
    load(start);
    return evaluate(budget);
  }
  /// `start` as node orders.
  std::vector<std::vector<std::int32_t>> orders_of(const std::vector<WorkerSchedule>& start) {
    load(start);
    return orders_;
  }

 private:
  static std::int32_t kind(ActionType type) { return split_index(type); }
  std::size_t key(const Action& a, std::int32_t k) const {
    return ((static_cast<std::size_t>(a.owner) *
                 static_cast<std::size_t>(layout_.virtual_stages()) +
             static_cast<std::size_t>(a.virtual_stage)) *
                static_cast<std::size_t>(layout_.microbatches) +
            static_cast<std::size_t>(a.microbatch)) *
               3 +
           static_cast<std::size_t>(k);
  }

  void load(const std::vector<WorkerSchedule>& start) {
    RECYCLE_ASSERT(start.size() == orders_.size(), "order search: a start with other workers");
    for (std::size_t w = 0; w < start.size(); ++w) {
      orders_[w].clear();
      for (const Action& a : start[w].actions) {
        const std::int32_t k = kind(a.type);
        RECYCLE_ASSERT(k >= 0, "order search takes F, I and W actions only");
        const std::int32_t n = node_of_[key(a, k)];
        RECYCLE_ASSERT(n >= 0 && graph_->position(n).worker == static_cast<std::int32_t>(w),
                       "order search: an action listed on a worker its route does not name");
        orders_[w].push_back(n);
      }
      graph_->reorder(static_cast<std::int32_t>(w), orders_[w]);
    }
  }

  void apply(const Move& mv) {
    auto& order = orders_[static_cast<std::size_t>(mv.worker)];
    const auto f = order.begin() + mv.from;
    const auto t = order.begin() + mv.to;
    if (mv.exchange) {
      std::iter_swap(f, t);
    } else if (mv.from < mv.to) {
      std::rotate(f, f + 1, t + 1);
    } else {
      std::rotate(t, f, f + 1);
    }
    graph_->reorder(mv.worker, order);
  }
  void undo(const Move& mv) { apply(mv.exchange ? mv : Move{mv.worker, mv.to, mv.from, false}); }

  bool within_memory(std::int32_t w) const {
    const std::int32_t limit = limit_[static_cast<std::size_t>(w)];
    std::int32_t held = 0;
    for (const std::int32_t n : orders_[static_cast<std::size_t>(w)]) {
      held += memory_[static_cast<std::size_t>(n)];
      if (held > limit) return false;
    }
    return true;
  }

  /// The score of the orders as they are, charged to `budget`; nullopt if they deadlock. Marks
  /// the critical compute actions: those on a longest path of the last iteration walked (start +
  /// duration + the longest way from their end to the iteration's end = its length).
  std::optional<Score> evaluate(std::int64_t& budget) {
    const auto st = steady_state(*graph_, kMaxSteadyStateIterations, &trace_);
    budget -= visits(st ? st->iterations + 1 : 1);
    if (!st) return std::nullopt;
    Score score{st->period, st->makespan, 0, 0};
    const auto n = static_cast<std::size_t>(graph_->nodes());
    // Tails in reverse topological order, from each node's edges (no successor lists needed).
    tail_.assign(n, 0);
    const auto relax = [&](std::int32_t node) {
      const auto k = static_cast<std::size_t>(node);
      const Nanos after = graph_->duration(node) + tail_[k];
      for (std::int32_t e = graph_->first_edge(node); e < graph_->first_edge(node + 1); ++e) {
        const ExecutionGraph::Edge edge = graph_->edge(e);
        if (edge.distance != 0) continue;
        Nanos& t = tail_[static_cast<std::size_t>(edge.from)];
        t = std::max(t, edge.delay + after);
      }
    };
    if (trace_.order.empty()) {
      for (std::int32_t node = graph_->nodes(); node-- > 0;) relax(node);
    } else {
      for (std::size_t i = trace_.order.size(); i-- > 0;) relax(trace_.order[i]);
    }
    Nanos length = 0;
    for (std::size_t k = 0; k < n; ++k) {
      length = std::max(length, trace_.last_end[k] + tail_[k]);
      if (compute_[k]) score.total_end += trace_.first_end[k];
    }
    for (std::size_t k = 0; k < n; ++k) {
      critical_[k] = compute_[k] && trace_.last_end[k] + tail_[k] == length ? 1 : 0;
      score.critical += critical_[k];
    }
    return score;
  }

  /// The moves of every critical action: shifts of up to kShiftReach places either way, and
  /// exchanges with an action of the same kind (F, I or W) up to kExchangeReach places away.
  void neighbourhood(std::vector<Move>& moves) const {
    moves.clear();
    for (std::size_t w = 0; w < orders_.size(); ++w) {
      const auto& order = orders_[w];
      const auto worker = static_cast<std::int32_t>(w);
      const auto size = static_cast<std::int32_t>(order.size());
      for (std::int32_t i = 0; i < size; ++i) {
        const auto a = static_cast<std::size_t>(order[static_cast<std::size_t>(i)]);
        if (!critical_[a]) continue;
        for (std::int32_t j = std::max(0, i - kShiftReach);
             j <= std::min(size - 1, i + kShiftReach); ++j) {
          if (j != i) moves.push_back({worker, i, j, false});
        }
        for (std::int32_t j = std::max(0, i - kExchangeReach);
             j <= std::min(size - 1, i + kExchangeReach); ++j) {
          if (std::abs(j - i) > 1 &&
              kind_[static_cast<std::size_t>(order[static_cast<std::size_t>(j)])] == kind_[a])
            moves.push_back({worker, i, j, true});
        }
      }
    }
  }

  const OrderSearchInput& in_;
  Layout layout_;
  Schedule schedule_;  // the first start: the graph reads its actions
  std::optional<ExecutionGraph> graph_;
  std::vector<char> compute_;         // per node: an F, I or W
  std::vector<std::int32_t> kind_;    // per node: 0 F, 1 I, 2 W, -1 other
  std::vector<std::int32_t> memory_;  // per node: held_delta
  std::vector<std::int32_t> node_of_;
  std::vector<std::int32_t> limit_;  // memory limit per worker
  std::vector<std::vector<std::int32_t>> orders_;
  std::vector<char> critical_;
  std::vector<Nanos> tail_;
  SteadyStateTrace trace_;
};

/// The micro-batches each worker that runs any runs per iteration at its stage: its own, less
/// those routed away, plus those routed to it.
std::vector<std::pair<WorkerId, std::int64_t>> work_per_worker(const Schedule& skeleton) {
  const Layout& layout = skeleton.layout;
  const auto pp = static_cast<std::size_t>(layout.pp);
  std::vector<std::int64_t> count(static_cast<std::size_t>(layout.workers()), 0);
  const RouteTable routes(skeleton);
  for (std::int32_t o = 0; o < layout.dp; ++o) {
    for (std::int32_t s = 0; s < layout.pp; ++s) {
      for (std::int32_t mb = 0; mb < layout.microbatches; ++mb) {
        ++count[static_cast<std::size_t>(routes.dp_of(o, s, mb)) * pp +
                static_cast<std::size_t>(s)];
      }
    }
  }
  std::vector<std::pair<WorkerId, std::int64_t>> out;
  for (std::size_t w = 0; w < count.size(); ++w) {
    if (count[w] == 0) continue;
    out.push_back(
        {WorkerId{static_cast<std::int32_t>(w / pp), static_cast<std::int32_t>(w % pp)}, count[w]});
  }
  return out;
}

}  // namespace

OrderSearchResult search_orders(const OrderSearchInput& input,
                                const std::vector<std::vector<WorkerSchedule>>& starts) {
  RECYCLE_ASSERT(input.skeleton != nullptr && input.model != nullptr,
                 "order search needs a skeleton and a cost model");
  RECYCLE_ASSERT(!starts.empty(), "order search needs a start");
  Search search(input, starts.front());
  OrderSearchResult out;
  out.lower_bound = period_lower_bound(*input.skeleton, *input.model, input.memory_limit);
  std::int64_t budget = input.budget;
  // Every start scored, then searched from best to worst (the first start first on ties).
  std::vector<std::pair<Score, std::size_t>> ranked;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    if (const auto score = search.score(starts[k], budget)) ranked.emplace_back(*score, k);
  }
  RECYCLE_ASSERT(!ranked.empty(), "order search: every start deadlocks");
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  Score best = ranked.front().first;
  std::vector<std::vector<std::int32_t>> best_orders =
      search.orders_of(starts[ranked.front().second]);
  for (const auto& [score, k] : ranked) {
    if (best.period <= out.lower_bound || budget <= 0) break;
    auto [found, orders] = search.run(starts[k], out.lower_bound, budget);
    ++out.starts_searched;
    if (found < best) {
      best = found;
      best_orders = std::move(orders);
    }
  }
  out.workers = search.to_workers(best_orders);
  out.score = *search.steady(out.workers);
  out.work = input.budget - budget;
  return out;
}

namespace {

/// Sums of the costs along the virtual stages, which the lower bounds read, with the least time
/// each hop between two workers' chunks takes on the direct network (none on a free one).
struct Chains {
  std::vector<StageCost> c;  ///< per virtual stage
  /// Per virtual stage v, on one micro-batch's chain: from the start of virtual stage 0's F to
  /// the start of v's (Fs and hops); from the start of the last virtual stage's I to the end of
  /// v's (Is and the hops of their gradients); from there to the start of v's; from the start of
  /// v's F to the end of the last virtual stage's.
  std::vector<Nanos> before_f, after_i, before_i, forwards;
  /// `peers`: the live workers of each physical stage (the ends of each hop).
  Chains(const Layout& layout, const CostModel& model,
         const std::vector<std::vector<WorkerId>>& peers) {
    const auto n = static_cast<std::size_t>(layout.virtual_stages());
    for (std::size_t v = 0; v < n; ++v) c.push_back(model.compute.virtual_stages.at(v));
    // hop[v]: from virtual stage v to v + 1 (an F's output; the gradient back is as large).
    std::vector<Nanos> hop_f(n, 0), hop_b(n, 0);
    for (std::size_t v = 0; v + 1 < n; ++v) {
      const std::int32_t from = layout.stage_of(static_cast<std::int32_t>(v));
      const std::int32_t to = layout.stage_of(static_cast<std::int32_t>(v + 1));
      if (from == to) continue;  // the turn of a V: one worker runs both chunks
      const auto& a = peers[static_cast<std::size_t>(from)];
      const auto& b = peers[static_cast<std::size_t>(to)];
      const auto vs = static_cast<std::int32_t>(v);
      hop_f[v] =
          model.cluster.least_transfer_time(a, b, model.send_bytes({ActionType::kSendF, vs, 0, 0}));
      hop_b[v] = model.cluster.least_transfer_time(
          b, a, model.send_bytes({ActionType::kSendB, vs + 1, 0, 0}));
    }
    before_f.assign(n + 1, 0);
    after_i.assign(n + 1, 0);
    forwards.assign(n + 1, 0);
    for (std::size_t v = 0; v < n; ++v) before_f[v + 1] = before_f[v] + c[v].forward + hop_f[v];
    before_i.assign(n + 1, 0);
    for (std::size_t v = n; v-- > 0;) {
      before_i[v] = after_i[v + 1] + hop_b[v];
      after_i[v] = before_i[v] + c[v].backward_input;
      forwards[v] = forwards[v + 1] + c[v].forward + hop_f[v];
    }
  }
};

/// The live workers of each physical stage: those that run any micro-batch.
std::vector<std::vector<WorkerId>> stage_peers(
    const Layout& layout, const std::vector<std::pair<WorkerId, std::int64_t>>& work) {
  std::vector<std::vector<WorkerId>> peers(static_cast<std::size_t>(layout.pp));
  for (const auto& [w, n] : work) peers[static_cast<std::size_t>(w.stage)].push_back(w);
  return peers;
}

/// A worker's chunks: its lowest and highest virtual stage and, per micro-batch, the sums of its
/// chunks' costs.
struct Hosted {
  std::size_t lowest = 0, highest = 0;
  Nanos forward = 0, input = 0, weight = 0, largest_forward = 0;
  Hosted(const Layout& layout, const Chains& chains, std::int32_t stage) {
    lowest = static_cast<std::size_t>(layout.virtual_stage(stage, 0));
    highest = lowest;
    for (std::int32_t k = 0; k < layout.interleave; ++k) {
      const auto v = static_cast<std::size_t>(layout.virtual_stage(stage, k));
      lowest = std::min(lowest, v);
      highest = std::max(highest, v);
      forward += chains.c[v].forward;
      input += chains.c[v].backward_input;
      weight += chains.c[v].backward_weight;
      largest_forward = std::max(largest_forward, chains.c[v].forward);
    }
  }
};

}  // namespace

Nanos makespan_lower_bound(const Schedule& skeleton, const CostModel& model,
                           const std::vector<std::int32_t>& memory_limit) {
  const Layout& layout = skeleton.layout;
  const std::vector<std::pair<WorkerId, std::int64_t>> work = work_per_worker(skeleton);
  const Chains ch(layout, model, stage_peers(layout, work));
  const std::size_t end = ch.c.size();
  const Nanos all_f = ch.before_f[end];
  const Nanos last_w = ch.c[0].backward_weight;
  // The chain of one micro-batch: every F, every I, then the first virtual stage's W.
  Nanos bound = all_f + ch.after_i[0] + last_w;
  for (const auto& [w, n] : work) {
    const Hosted h(layout, ch, w.stage);
    // Its first F needs the Fs before its lowest chunk; its first I the chain down to its highest.
    const Nanos release_f = ch.before_f[h.lowest];
    const Nanos release_i = all_f + ch.before_i[h.highest];
    // Before its first I it can run only Fs: no more than all of them, no more than the time
    // from its first input, and no more chunks than it may hold.
    Nanos early = std::min(n * h.forward, release_i - release_f);
    if (!memory_limit.empty()) {
      early = std::min(early, clock_times(h.largest_forward,
                                          memory_limit.at(static_cast<std::size_t>(w.stage))));
    }
    bound = std::max(
        {bound,
         // its first I, then all its work but the Fs that can run before it
         release_i + n * (h.forward + h.input + h.weight) - early,
         // its last F (of its highest chunk at the latest), then that micro-batch's way to the end
         release_f + n * h.forward + (all_f - ch.before_f[h.highest + 1]) + ch.after_i[0] + last_w,
         // its last I (of its lowest chunk at the earliest), then the way down and the first W
         release_i + n * h.input + (ch.after_i[0] - ch.after_i[h.lowest]) + last_w});
  }
  return bound;
}

Nanos makespan_lower_bound(const Schedule& skeleton, const Costs& costs,
                           const std::vector<std::int32_t>& memory_limit) {
  return makespan_lower_bound(skeleton, CostModel::compute_only(costs), memory_limit);
}

Nanos period_lower_bound(const Schedule& skeleton, const CostModel& model,
                         const std::vector<std::int32_t>& memory_limit) {
  const Layout& layout = skeleton.layout;
  const Costs& costs = model.compute;
  const std::vector<std::pair<WorkerId, std::int64_t>> work = work_per_worker(skeleton);
  // What ends each worker's iteration on its compute stream: its stage's gradient all-reduce (over
  // the stage's live workers, as the execution graph's) and its optimizer step.
  const std::vector<std::vector<WorkerId>> peers = stage_peers(layout, work);
  std::vector<Nanos> reduce(static_cast<std::size_t>(layout.pp), 0);
  std::vector<Nanos> step(static_cast<std::size_t>(layout.pp), 0);
  for (std::int32_t s = 0; s < layout.pp; ++s) {
    const auto k = static_cast<std::size_t>(s);
    if (peers[k].empty()) continue;
    reduce[k] = model.all_reduce_time(s, peers[k]);
    step[k] = k < costs.optimizer.size() ? costs.optimizer[k] : 0;
  }
  // Two weight versions (PipeDream-2BW) step each stage on its own, and a worker's lists carry the
  // last iteration's backwards into the time before its first I: no idle time is certain there.
  const bool lagged = skeleton.weight_versions == 2;
  if (!skeleton.staggered_optimizer && !lagged) {
    // Each worker starts an iteration after the last barrier and its own step; the next barrier
    // waits for the worker whose compute ends last, then for its stage's all-reduce.
    Nanos least_reduce = std::numeric_limits<Nanos>::max();
    Nanos least_step = std::numeric_limits<Nanos>::max();
    for (std::size_t k = 0; k < peers.size(); ++k) {
      if (peers[k].empty()) continue;
      least_reduce = std::min(least_reduce, reduce[k]);
      least_step = std::min(least_step, step[k]);
    }
    return makespan_lower_bound(skeleton, model, memory_limit) +
           (work.empty() ? 0 : least_reduce + least_step);
  }
  const Chains ch(layout, model, peers);
  Nanos bound = 0;
  for (const auto& [w, n] : work) {
    const auto s = static_cast<std::size_t>(w.stage);
    const Hosted h(layout, ch, w.stage);
    // From its first F (of its lowest chunk) to its first I (of its highest: every other I of a
    // micro-batch follows that one): every F from the lowest chunk to the last virtual stage, then
    // every I back to just after the highest. Before it the worker can run only Fs, at most as
    // many chunks as it may hold.
    const Nanos chain = ch.forwards[h.lowest] + ch.before_i[h.highest];
    const std::int64_t chunks = n * layout.interleave;
    const std::int64_t early =
        std::min<std::int64_t>(chunks, memory_limit.empty() ? chunks : memory_limit.at(s));
    const Nanos idle =
        lagged ? 0 : std::max<Nanos>(0, chain - clock_times(h.largest_forward, early));
    bound = std::max(bound, n * (h.forward + h.input + h.weight) + idle + reduce[s] + step[s]);
  }
  return bound;
}

Nanos period_lower_bound(const Schedule& skeleton, const Costs& costs,
                         const std::vector<std::int32_t>& memory_limit) {
  return period_lower_bound(skeleton, CostModel::compute_only(costs), memory_limit);
}

}  // namespace recycle::planner
