#include "planner/order_search.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <tuple>
#include <utility>

#include "core/error.hpp"

namespace recycle::planner {

namespace {

constexpr std::int32_t kNone = -1;

// The search's constants, tuned on the optimality-gap instances (tests/planner/exact_planner_test):
constexpr std::int64_t kTenure = 20;  ///< iterations a moved action stays tabu, plus workers / 4
constexpr std::int64_t kStall = 50;  ///< iterations without a better schedule before the next start
constexpr std::int32_t kShiftReach = 4;  ///< a critical action moves up to this many places
constexpr std::int32_t kExchangeReach =
    12;  ///< or trades places with an action of its kind this near

/// The three compute actions of one micro-batch at one stage, numbered
/// ((owner * pp + stage) * microbatches + microbatch) * 3 + kind.
enum Kind : std::int32_t { kF = 0, kI = 1, kW = 2 };

struct Node {
  Nanos duration = 0;
  std::int32_t worker = 0;  ///< index into the search's worker list
  std::int32_t deps[2] = {kNone, kNone};
  std::int32_t dependents[2] = {kNone, kNone};
  std::int32_t memory = 0;  ///< +1 for F (activations kept), -1 for W (freed), 0 for I
};

/// Lexicographic: the makespan; then the number of critical actions (a schedule is one move
/// closer to a shorter makespan when fewer actions lie on longest paths); then the sum of end
/// times (earlier work leaves room later).
struct Score {
  Nanos makespan = 0;
  std::int64_t critical = 0;
  Nanos total_end = 0;
  friend bool operator<(const Score& a, const Score& b) {
    return std::tie(a.makespan, a.critical, a.total_end) <
           std::tie(b.makespan, b.critical, b.total_end);
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
  Search(const OrderSearchInput& in, const std::vector<WorkerSchedule>& workers)
      : in_(in), layout_(in.skeleton->layout) {
    const RouteTable routes(*in.skeleton);
    const std::int32_t pp = layout_.pp;
    const std::int32_t m = layout_.microbatches;
    nodes_.resize(static_cast<std::size_t>(layout_.dp) * static_cast<std::size_t>(pp) *
                  static_cast<std::size_t>(m) * 3);
    std::vector<std::int32_t> worker_of(static_cast<std::size_t>(layout_.workers()), kNone);
    for (std::size_t w = 0; w < workers.size(); ++w) {
      worker_of[flat(workers[w].id)] = static_cast<std::int32_t>(w);
      limit_.push_back(in.memory_limit.at(static_cast<std::size_t>(workers[w].id.stage)));
    }
    for (std::int32_t o = 0; o < layout_.dp; ++o) {
      for (std::int32_t s = 0; s < pp; ++s) {
        for (std::int32_t mb = 0; mb < m; ++mb) {
          const std::int32_t w = worker_of[flat({routes.dp_of(o, s, mb), s})];
          RECYCLE_ASSERT(w != kNone, "order search: a micro-batch routed to no listed worker");
          const StageCost& c = in.costs->virtual_stages.at(static_cast<std::size_t>(s));
          const Nanos durations[3] = {c.forward, c.backward_input, c.backward_weight};
          for (std::int32_t k = 0; k < 3; ++k) {
            Node& n = nodes_[static_cast<std::size_t>(id(o, s, mb, k))];
            n.duration = durations[k];
            n.worker = w;
            n.memory = k == kF ? 1 : k == kW ? -1 : 0;
          }
          if (s > 0) depend(id(o, s, mb, kF), id(o, s - 1, mb, kF));
          depend(id(o, s, mb, kI), id(o, s, mb, kF));
          if (s + 1 < pp) depend(id(o, s, mb, kI), id(o, s + 1, mb, kI));
          depend(id(o, s, mb, kW), id(o, s, mb, kI));
        }
      }
    }
    const std::size_t n = nodes_.size();
    position_.resize(n);
    start_.resize(n);
    tail_.resize(n);
    pending_.resize(n);
    topo_.reserve(n);
  }

  /// Searches from `start` until kStall iterations bring nothing better, `lower_bound` is reached
  /// or `budget` (in action visits) runs out. Returns the best orders found and their score.
  std::pair<Score, std::vector<std::vector<std::int32_t>>> run(
      const std::vector<WorkerSchedule>& start, Nanos lower_bound, std::int64_t& budget) {
    load(start);
    const auto visits = static_cast<std::int64_t>(nodes_.size());
    const auto initial = evaluate();
    RECYCLE_ASSERT(initial.has_value(), "order search: the starting orders deadlock");
    Score current = *initial;
    Score best = current;
    std::vector<std::vector<std::int32_t>> best_orders = orders_;
    // Tabu: an action moved recently may not move again for `tenure` iterations, unless the move
    // beats the best schedule so far. When every move is tabu, the best of them is taken.
    std::vector<std::int64_t> tabu_until(nodes_.size(), 0);
    const auto tenure = kTenure + static_cast<std::int64_t>(orders_.size() / 4);
    std::vector<Move> moves;
    std::int64_t last_gain = 0;
    for (std::int64_t iteration = 1;
         best.makespan > lower_bound && budget > 0 && iteration - last_gain <= kStall;
         ++iteration) {
      compute_tails();
      neighbourhood(current.makespan, moves);
      bool found = false, any = false;
      Score chosen{}, fallback_score{};
      Move pick{}, fallback{};
      for (const Move& mv : moves) {
        if (budget <= 0) break;
        const std::int32_t moved =
            orders_[static_cast<std::size_t>(mv.worker)][static_cast<std::size_t>(mv.from)];
        apply(mv);
        if (within_memory(mv.worker)) {
          budget -= 2 * visits;  // the forward and the backward pass
          if (const auto score = evaluate()) {
            if (!any || *score < fallback_score) {
              any = true;
              fallback_score = *score;
              fallback = mv;
            }
            const bool allowed = tabu_until[static_cast<std::size_t>(moved)] < iteration ||
                                 score->makespan < best.makespan;
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
      current = *evaluate();
      if (current < best) {
        best = current;
        best_orders = orders_;
        last_gain = iteration;
      }
    }
    return {best, std::move(best_orders)};
  }

  std::vector<WorkerSchedule> to_workers(
      const std::vector<WorkerSchedule>& ids,
      const std::vector<std::vector<std::int32_t>>& orders) const {
    std::vector<WorkerSchedule> out;
    out.reserve(ids.size());
    for (std::size_t w = 0; w < ids.size(); ++w) {
      WorkerSchedule ws{ids[w].id, {}};
      ws.actions.reserve(orders[w].size());
      for (const std::int32_t a : orders[w]) ws.actions.push_back(action(a));
      out.push_back(std::move(ws));
    }
    return out;
  }

 private:
  std::size_t flat(WorkerId id) const {
    return static_cast<std::size_t>(id.dp) * static_cast<std::size_t>(layout_.pp) +
           static_cast<std::size_t>(id.stage);
  }
  std::int32_t id(std::int32_t owner, std::int32_t stage, std::int32_t mb,
                  std::int32_t kind) const {
    return ((owner * layout_.pp + stage) * layout_.microbatches + mb) * 3 + kind;
  }
  Action action(std::int32_t a) const {
    const std::int32_t kind = a % 3;
    const std::int32_t task = a / 3;
    const std::int32_t mb = task % layout_.microbatches;
    const std::int32_t stage = (task / layout_.microbatches) % layout_.pp;
    const std::int32_t owner = task / layout_.microbatches / layout_.pp;
    const ActionType type = kind == kF   ? ActionType::kForward
                            : kind == kI ? ActionType::kBackwardInput
                                         : ActionType::kBackwardWeight;
    return {type, stage, mb, owner};
  }
  void depend(std::int32_t a, std::int32_t on) {
    Node& n = nodes_[static_cast<std::size_t>(a)];
    *std::find(std::begin(n.deps), std::end(n.deps), kNone) = on;
    Node& d = nodes_[static_cast<std::size_t>(on)];
    *std::find(std::begin(d.dependents), std::end(d.dependents), kNone) = a;
  }

  void load(const std::vector<WorkerSchedule>& start) {
    orders_.assign(start.size(), {});
    for (std::size_t w = 0; w < start.size(); ++w) {
      for (const Action& a : start[w].actions) {
        const std::int32_t kind = a.type == ActionType::kForward          ? kF
                                  : a.type == ActionType::kBackwardInput  ? kI
                                  : a.type == ActionType::kBackwardWeight ? kW
                                                                          : kNone;
        RECYCLE_ASSERT(kind != kNone, "order search takes F, I and W actions only");
        const std::int32_t a_id = id(a.owner, a.virtual_stage, a.microbatch, kind);
        RECYCLE_ASSERT(
            nodes_[static_cast<std::size_t>(a_id)].worker == static_cast<std::int32_t>(w),
            "order search: an action listed on a worker its route does not name");
        orders_[w].push_back(a_id);
      }
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
  }
  void undo(const Move& mv) { apply(mv.exchange ? mv : Move{mv.worker, mv.to, mv.from, false}); }

  bool within_memory(std::int32_t w) const {
    const std::int32_t limit = limit_[static_cast<std::size_t>(w)];
    std::int32_t held = 0;
    for (const std::int32_t a : orders_[static_cast<std::size_t>(w)]) {
      held += nodes_[static_cast<std::size_t>(a)].memory;
      if (held > limit) return false;
    }
    return true;
  }

  /// ASAP start times in topological order (Kahn), then tails and the critical count; nullopt if
  /// the orders form a cycle.
  std::optional<Score> evaluate() {
    for (const auto& order : orders_) {
      for (std::size_t i = 0; i < order.size(); ++i)
        position_[static_cast<std::size_t>(order[i])] = static_cast<std::int32_t>(i);
    }
    topo_.clear();
    for (std::size_t a = 0; a < nodes_.size(); ++a) {
      const Node& n = nodes_[a];
      pending_[a] = (n.deps[0] != kNone) + (n.deps[1] != kNone) + (position_[a] > 0);
      start_[a] = 0;
      if (pending_[a] == 0) topo_.push_back(static_cast<std::int32_t>(a));
    }
    Score score;
    for (std::size_t i = 0; i < topo_.size(); ++i) {
      const auto a = static_cast<std::size_t>(topo_[i]);
      const Node& n = nodes_[a];
      const Nanos end = start_[a] + n.duration;
      score.makespan = std::max(score.makespan, end);
      score.total_end += end;
      const auto release = [&](std::int32_t next) {
        const auto b = static_cast<std::size_t>(next);
        start_[b] = std::max(start_[b], end);
        if (--pending_[b] == 0) topo_.push_back(next);
      };
      for (const std::int32_t d : n.dependents)
        if (d != kNone) release(d);
      const auto& order = orders_[static_cast<std::size_t>(n.worker)];
      const auto next = static_cast<std::size_t>(position_[a]) + 1;
      if (next < order.size()) release(order[next]);
    }
    if (topo_.size() != nodes_.size()) return std::nullopt;
    compute_tails();
    for (std::size_t a = 0; a < nodes_.size(); ++a)
      score.critical += critical(static_cast<std::int32_t>(a), score.makespan);
    return score;
  }

  /// The longest path from each action's end to the end of the schedule, for the orders
  /// evaluate() last ran on (it leaves their topological order in topo_).
  void compute_tails() {
    for (std::size_t i = topo_.size(); i-- > 0;) {
      const auto a = static_cast<std::size_t>(topo_[i]);
      const Node& n = nodes_[a];
      Nanos tail = 0;
      const auto consider = [&](std::int32_t next) {
        const auto b = static_cast<std::size_t>(next);
        tail = std::max(tail, nodes_[b].duration + tail_[b]);
      };
      for (const std::int32_t d : n.dependents)
        if (d != kNone) consider(d);
      const auto& order = orders_[static_cast<std::size_t>(n.worker)];
      const auto next = static_cast<std::size_t>(position_[a]) + 1;
      if (next < order.size()) consider(order[next]);
      tail_[a] = tail;
    }
  }

  bool critical(std::int32_t a, Nanos makespan) const {
    const auto i = static_cast<std::size_t>(a);
    return start_[i] + nodes_[i].duration + tail_[i] == makespan;
  }

  /// The moves of every critical action: shifts of up to kShiftReach places either way, and
  /// exchanges with an action of the same kind (F, I or W) up to kExchangeReach places away.
  void neighbourhood(Nanos makespan, std::vector<Move>& moves) const {
    moves.clear();
    for (std::size_t w = 0; w < orders_.size(); ++w) {
      const auto& order = orders_[w];
      const auto worker = static_cast<std::int32_t>(w);
      const auto size = static_cast<std::int32_t>(order.size());
      for (std::int32_t i = 0; i < size; ++i) {
        const std::int32_t a = order[static_cast<std::size_t>(i)];
        if (!critical(a, makespan)) continue;
        for (std::int32_t j = std::max(0, i - kShiftReach);
             j <= std::min(size - 1, i + kShiftReach); ++j) {
          if (j != i) moves.push_back({worker, i, j, false});
        }
        for (std::int32_t j = std::max(0, i - kExchangeReach);
             j <= std::min(size - 1, i + kExchangeReach); ++j) {
          if (std::abs(j - i) > 1 && order[static_cast<std::size_t>(j)] % 3 == a % 3)
            moves.push_back({worker, i, j, true});
        }
      }
    }
  }

  const OrderSearchInput& in_;
  Layout layout_;
  std::vector<Node> nodes_;
  std::vector<std::int32_t> limit_;  ///< memory limit per search worker
  std::vector<std::vector<std::int32_t>> orders_;
  std::vector<std::int32_t> position_, pending_, topo_;
  std::vector<Nanos> start_, tail_;
};

}  // namespace

OrderSearchResult search_orders(const OrderSearchInput& input,
                                const std::vector<std::vector<WorkerSchedule>>& starts) {
  RECYCLE_ASSERT(input.skeleton != nullptr && input.costs != nullptr,
                 "order search needs a skeleton and costs");
  RECYCLE_ASSERT(input.skeleton->layout.interleave == 1, "order search needs interleave 1");
  RECYCLE_ASSERT(!starts.empty(), "order search needs a start");
  Search search(input, starts.front());
  OrderSearchResult out;
  out.lower_bound = makespan_lower_bound(*input.skeleton, *input.costs);
  std::int64_t budget = input.budget;
  std::optional<Score> best;
  std::vector<std::vector<std::int32_t>> best_orders;
  for (const auto& start : starts) {
    if (best && (best->makespan <= out.lower_bound || budget <= 0)) break;
    auto [score, orders] = search.run(start, out.lower_bound, budget);
    ++out.starts_searched;
    if (!best || score < *best) {
      best = score;
      best_orders = std::move(orders);
    }
  }
  out.makespan = best->makespan;
  out.workers = search.to_workers(starts.front(), best_orders);
  out.work = input.budget - budget;
  return out;
}

Nanos makespan_lower_bound(const Schedule& skeleton, const Costs& costs) {
  const Layout& layout = skeleton.layout;
  const auto pp = static_cast<std::size_t>(layout.pp);
  std::vector<StageCost> c(pp);
  for (std::size_t s = 0; s < pp; ++s) c[s] = costs.virtual_stages.at(s);
  // before_f[s]: forwards of the stages before s; after_i[s]: inputs of the stages after s.
  std::vector<Nanos> before_f(pp + 1, 0), after_i(pp + 1, 0);
  for (std::size_t s = 0; s < pp; ++s) before_f[s + 1] = before_f[s] + c[s].forward;
  for (std::size_t s = pp; s-- > 0;) after_i[s] = after_i[s + 1] + c[s].backward_input;
  const Nanos all_f = before_f[pp];
  const Nanos last_w = c[0].backward_weight;
  // The chain of one micro-batch: every F, every I, then stage 0's W.
  Nanos bound = all_f + after_i[0] + last_w;
  // Per worker: the micro-batches it runs (its own, less those routed away, plus re-routed).
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
  for (std::size_t w = 0; w < count.size(); ++w) {
    const std::int64_t n = count[w];
    if (n == 0) continue;
    const std::size_t s = w % pp;
    const Nanos release_f = before_f[s];
    const Nanos release_i = all_f + after_i[s + 1];
    const Nanos after_i_here = after_i[0] - after_i[s];  // the Is of the stages before s
    const Nanos work = c[s].forward + c[s].backward_input + c[s].backward_weight;
    bound =
        std::max({bound,
                  // all its work, from its first input on
                  release_f + n * work,
                  // its Is and Ws, from the first gradient on
                  release_i + n * (c[s].backward_input + c[s].backward_weight),
                  // its last F, then that micro-batch's way to the end
                  release_f + n * c[s].forward + (all_f - before_f[s + 1]) + after_i[0] + last_w,
                  // its last I, then the way down to stage 0 and its W
                  release_i + n * c[s].backward_input + after_i_here + last_w});
  }
  return bound;
}

}  // namespace recycle::planner
