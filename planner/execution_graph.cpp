#include "planner/execution_graph.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "core/error.hpp"
#include "planner/dependency_graph.hpp"
#include "planner/semantics.hpp"

namespace recycle::planner {

namespace {

/// Times from a cost model: compute and optimizer from its costs, transfers and all-reduces from
/// its cluster and bytes.
struct ModelDurations {
  const CostModel& model;

  [[nodiscard]] Nanos action(WorkerId, const Action& a) const { return model.compute.duration(a); }
  [[nodiscard]] Nanos transfer(WorkerId from, WorkerId to, const Action& send) const {
    return model.cluster.transfer_time(from, to, model.send_bytes(send));
  }
  [[nodiscard]] Nanos all_reduce(std::int32_t stage, std::span<const WorkerId> peers) const {
    return model.cluster.all_reduce_time(peers, model.gradient_bytes(stage));
  }
};

/// Action times from a function; a free network.
struct FunctionDurations {
  const ActionDuration& duration;

  [[nodiscard]] Nanos action(WorkerId id, const Action& a) const { return duration(id, a); }
  [[nodiscard]] Nanos transfer(WorkerId, WorkerId, const Action&) const { return 0; }
  [[nodiscard]] Nanos all_reduce(std::int32_t, std::span<const WorkerId>) const { return 0; }
};

std::string where(const WorkerSchedule& ws, const Action& a) {
  return "worker " + to_string(ws.id) + " action " + to_token(a, ws.id.dp);
}

}  // namespace

namespace detail {

/// Edges gathered node by node while the rules are applied, before the nodes are renumbered.
class EdgeBuffer {
 public:
  explicit EdgeBuffer(std::size_t nodes) : begin_(nodes, 0), end_(nodes, 0) {
    pred_.reserve(nodes * 3);
  }

  /// Starts `node`'s edges: until the next open(), add() to it appends in place.
  void open(std::int32_t node) {
    open_ = node;
    begin_[static_cast<std::size_t>(node)] = static_cast<std::int32_t>(pred_.size());
    end_[static_cast<std::size_t>(node)] = begin_[static_cast<std::size_t>(node)];
  }
  void add(std::int32_t to, std::int32_t from, std::int32_t distance, Nanos delay) {
    if (from < 0) return;
    const std::uint32_t packed =
        static_cast<std::uint32_t>(from) | (static_cast<std::uint32_t>(distance) << 31);
    if (to == open_) {
      push(packed, delay);
      ++end_[static_cast<std::size_t>(to)];
      return;
    }
    later_.push_back({to, packed, delay});
  }
  /// Appends the edges added to nodes other than the open one, each node's together.
  void close() {
    open_ = -1;
    std::stable_sort(later_.begin(), later_.end(),
                     [](const Later& a, const Later& b) { return a.to < b.to; });
    for (std::size_t k = 0; k < later_.size();) {
      const std::int32_t to = later_[k].to;
      open(to);
      for (; k < later_.size() && later_[k].to == to; ++k) {
        push(later_[k].packed, later_[k].delay);
        ++end_[static_cast<std::size_t>(to)];
      }
    }
    later_.clear();
    open_ = -1;
  }

  [[nodiscard]] std::int32_t begin(std::size_t node) const { return begin_[node]; }
  [[nodiscard]] std::int32_t end(std::size_t node) const { return end_[node]; }
  [[nodiscard]] std::uint32_t pred(std::int32_t e) const {
    return pred_[static_cast<std::size_t>(e)];
  }
  [[nodiscard]] Nanos delay(std::int32_t e) const {
    return delay_.empty() ? 0 : delay_[static_cast<std::size_t>(e)];
  }
  [[nodiscard]] std::size_t size() const { return pred_.size(); }
  [[nodiscard]] bool delays() const { return !delay_.empty(); }

 private:
  struct Later {
    std::int32_t to;
    std::uint32_t packed;
    Nanos delay;
  };
  /// Delays are stored only once one is not zero (a free network has none).
  void push(std::uint32_t packed, Nanos delay) {
    if (delay != 0 && delay_.empty()) delay_.assign(pred_.size(), 0);
    pred_.push_back(packed);
    if (!delay_.empty()) delay_.push_back(delay);
  }

  std::vector<std::int32_t> begin_, end_;
  std::vector<std::uint32_t> pred_;
  std::vector<Nanos> delay_;
  std::vector<Later> later_;
  std::int32_t open_ = -1;
};

}  // namespace detail

std::vector<Action> implied_actions(const WorkerSchedule& worker) {
  std::vector<Action> out;
  for (const ActionType type : {ActionType::kReduceGrad, ActionType::kOptimizer}) {
    if (std::none_of(worker.actions.begin(), worker.actions.end(),
                     [type](const Action& a) { return a.type == type; })) {
      out.push_back({type, worker.id.stage, -1, worker.id.dp});
    }
  }
  return out;
}

ExecutionGraph::ExecutionGraph(const Schedule& schedule, const CostModel& model,
                               const GraphOptions& options, const std::string& source) {
  build(schedule, ModelDurations{model}, options, source);
}

ExecutionGraph::ExecutionGraph(const Schedule& schedule, const ActionDuration& duration,
                               const GraphOptions& options, const std::string& source) {
  build(schedule, FunctionDurations{duration}, options, source);
}

const Action& ExecutionGraph::action(std::int32_t worker, std::int32_t index) const noexcept {
  const auto w = static_cast<std::size_t>(worker);
  const auto listed = static_cast<std::int32_t>(schedule_->workers[w].actions.size());
  if (index < listed) return schedule_->workers[w].actions[static_cast<std::size_t>(index)];
  return implied_[w][static_cast<std::size_t>(index - listed)];
}

std::int32_t ExecutionGraph::implied(std::int32_t worker) const noexcept {
  return static_cast<std::int32_t>(implied_[static_cast<std::size_t>(worker)].size());
}

std::vector<std::int32_t> ExecutionGraph::last_nodes() const {
  std::vector<std::int32_t> out;
  out.reserve(static_cast<std::size_t>(workers()));
  for (std::int32_t w = 0; w < workers(); ++w) out.push_back(node(w, list_size(w) - 1));
  return out;
}

namespace {

constexpr std::uint32_t kFrom = 0x7fff'ffffU;

}  // namespace

template <typename Durations>
void ExecutionGraph::build(const Schedule& schedule, const Durations& durations,
                           const GraphOptions& options, const std::string& source) {
  schedule_ = &schedule;
  const Layout& layout = schedule.layout;
  const std::int32_t last = layout.pp * layout.interleave - 1;
  const bool runtime = options.network == Network::kRuntime;
  const bool lowered = schedule.is_lowered();
  const ActionIndex index(schedule);
  const std::int32_t actions = index.actions();
  const auto workers = static_cast<std::int32_t>(schedule.workers.size());

  // Provisional numbers: the actions as ActionIndex numbers them, then the implied REDUCE_GRAD/OPT,
  // the transfers, the all-reduces, the barrier. Renumbered in topological order at the end.
  std::int32_t next = actions;
  std::vector<std::int32_t> list_node;
  list_begin_.assign(1, 0);
  implied_.assign(schedule.workers.size(), {});
  std::vector<Position> position(static_cast<std::size_t>(actions), Position{});
  for (std::int32_t w = 0; w < workers; ++w) {
    const WorkerSchedule& ws = schedule.workers[static_cast<std::size_t>(w)];
    for (std::size_t i = 0; i < ws.actions.size(); ++i) {
      const std::int32_t n = index.node(w, static_cast<std::int32_t>(i));
      position[static_cast<std::size_t>(n)] = {w, static_cast<std::int32_t>(i)};
      list_node.push_back(n);
    }
    implied_[static_cast<std::size_t>(w)] = implied_actions(ws);
    for (std::size_t k = 0; k < implied_[static_cast<std::size_t>(w)].size(); ++k) {
      position.push_back({w, static_cast<std::int32_t>(ws.actions.size() + k)});
      list_node.push_back(next++);
    }
    list_begin_.push_back(static_cast<std::int32_t>(list_node.size()));
  }
  const auto worker_of = [&](std::int32_t node) {
    return position[static_cast<std::size_t>(node)].worker;
  };
  const auto id_of = [&](std::int32_t worker) {
    return schedule.workers[static_cast<std::size_t>(worker)].id;
  };
  const auto at = [&](std::int32_t w, std::int32_t i) {
    return list_node[static_cast<std::size_t>(list_begin_[static_cast<std::size_t>(w)] + i)];
  };
  const auto action_at = [&](std::int32_t w, std::int32_t i) -> const Action& {
    const WorkerSchedule& ws = schedule.workers[static_cast<std::size_t>(w)];
    if (static_cast<std::size_t>(i) < ws.actions.size())
      return ws.actions[static_cast<std::size_t>(i)];
    return implied_[static_cast<std::size_t>(w)][static_cast<std::size_t>(i) - ws.actions.size()];
  };

  // Runtime network: one transfer per SEND, matched with the RECV its partner rule names on the
  // worker the routes name.
  std::vector<std::int32_t> transfer_of(static_cast<std::size_t>(actions), -1);  // transfer number
  std::vector<std::pair<std::int32_t, std::int32_t>> ends;                       // SEND, RECV node
  if (runtime) {
    const RouteTable routes(schedule);
    for (std::int32_t w = 0; w < workers; ++w) {
      const WorkerSchedule& ws = schedule.workers[static_cast<std::size_t>(w)];
      for (std::size_t i = 0; i < ws.actions.size(); ++i) {
        const Action& a = ws.actions[i];
        if (a.type != ActionType::kSendF && a.type != ActionType::kSendB) continue;
        const Action recv = partner(a);
        const auto fail = [&](const std::string& problem) {
          throw InputError(source, where(ws, a) + problem);
        };
        if (a.owner < 0 || a.owner >= layout.dp || a.microbatch < 0 ||
            a.microbatch >= layout.microbatches) {
          fail(": owner or micro-batch outside the layout");
        }
        if (recv.virtual_stage < 0 || recv.virtual_stage > last) {
          fail(std::string(": sends ") +
               (a.type == ActionType::kSendF ? "past the last" : "before the first") +
               " virtual stage");
        }
        const WorkerId to = routes.worker_of(a.owner, recv.virtual_stage, a.microbatch);
        const std::int32_t r =
            index.first(*chunk_action(recv.type), a.owner, recv.virtual_stage, a.microbatch);
        if (r < 0 || id_of(worker_of(r)) != to) {
          fail(": no matching " + to_token(recv, to.dp) + " on worker " + to_string(to));
        }
        const std::int32_t s = index.node(w, static_cast<std::int32_t>(i));
        if (transfer_of[static_cast<std::size_t>(r)] >= 0) fail(" is listed twice");
        const auto t = static_cast<std::int32_t>(ends.size());
        transfer_of[static_cast<std::size_t>(s)] = t;
        transfer_of[static_cast<std::size_t>(r)] = t;
        ends.emplace_back(s, r);
      }
    }
    for (std::int32_t w = 0; w < workers; ++w) {
      const WorkerSchedule& ws = schedule.workers[static_cast<std::size_t>(w)];
      for (std::size_t i = 0; i < ws.actions.size(); ++i) {
        const Action& a = ws.actions[i];
        if (a.type != ActionType::kRecvF && a.type != ActionType::kRecvB) continue;
        if (transfer_of[static_cast<std::size_t>(index.node(w, static_cast<std::int32_t>(i)))] >=
            0) {
          continue;
        }
        const bool twice =
            ActionIndex::fits(layout, ws.id, a) &&
            index.count(*chunk_action(a.type), a.owner, a.virtual_stage, a.microbatch) > 1;
        throw InputError(source,
                         where(ws, a) + (twice ? " is listed twice" : ": no SEND delivers it"));
      }
    }
  }
  const std::int32_t first_transfer = next;
  next += static_cast<std::int32_t>(ends.size());

  // One all-reduce per stage with live workers, then the barrier.
  std::vector<std::vector<WorkerId>> peers(static_cast<std::size_t>(std::max(layout.pp, 0)));
  for (const WorkerSchedule& ws : schedule.workers) {
    if (ws.id.stage >= 0 && ws.id.stage < layout.pp)
      peers[static_cast<std::size_t>(ws.id.stage)].push_back(ws.id);
  }
  std::vector<std::int32_t> collective_of(peers.size(), -1);
  std::vector<std::int32_t> collectives;  // provisional nodes
  for (std::size_t s = 0; s < peers.size(); ++s) {
    if (peers[s].empty()) continue;
    collective_of[s] = next++;
    collectives.push_back(collective_of[s]);
    collective_stage_.push_back(static_cast<std::int32_t>(s));
  }
  const std::int32_t barrier = options.staggered_optimizer ? -1 : next++;

  const auto nodes = static_cast<std::size_t>(next);
  std::vector<NodeKind> kind(nodes, NodeKind::kAction);
  std::vector<Nanos> duration(nodes, 0);
  std::vector<std::int32_t> number(nodes, -1);  // transfer or all-reduce number
  position.resize(nodes, Position{});
  detail::EdgeBuffer edges(nodes);
  const auto add = [&edges](std::int32_t to, std::int32_t from, std::int32_t distance,
                            Nanos delay = 0) { edges.add(to, from, distance, delay); };
  // A SEND/RECV has completed when its transfer has; with eager sends a RECV also waits for its
  // own posting (the data may have arrived before it).
  const auto after_comm = [&](std::int32_t to, std::int32_t comm, std::int32_t distance) {
    const std::int32_t t = transfer_of[static_cast<std::size_t>(comm)];
    add(to, first_transfer + t, distance);
    if (options.eager_sends && ends[static_cast<std::size_t>(t)].second == comm)
      add(to, comm, distance);
  };

  for (std::int32_t w = 0; w < workers; ++w) {
    const WorkerSchedule& ws = schedule.workers[static_cast<std::size_t>(w)];
    const std::int32_t size =
        list_begin_[static_cast<std::size_t>(w) + 1] - list_begin_[static_cast<std::size_t>(w)];
    // The last action of each stream in the list: what the next iteration's first ones wait for.
    std::int32_t final_compute = -1, final_comm = -1;
    for (std::int32_t i = size; i-- > 0;) {
      const Stream stream = stream_of(action_at(w, i).type);
      if (stream == Stream::kCompute && final_compute < 0) final_compute = at(w, i);
      if (stream == Stream::kComm && final_comm < 0) final_comm = at(w, i);
    }
    std::int32_t last_compute = -1, last_comm = -1;
    // The compute stream's previous action: in this iteration, else the previous one's last.
    const auto after_compute = [&](std::int32_t to) {
      if (last_compute >= 0) {
        add(to, last_compute, 0);
      } else {
        add(to, final_compute, 1);
      }
    };
    for (std::int32_t i = 0; i < size; ++i) {
      const std::int32_t n = at(w, i);
      const Action& a = action_at(w, i);
      edges.open(n);
      if (stream_of(a.type) == Stream::kComm) {
        if (runtime) {
          number[static_cast<std::size_t>(n)] = transfer_of[static_cast<std::size_t>(n)];
          if (last_comm >= 0) {
            after_comm(n, last_comm, 0);
          } else if (final_comm >= 0) {
            after_comm(n, final_comm, 1);
          }
          last_comm = n;
        }
        after_compute(n);
        continue;
      }
      if (a.type == ActionType::kReduceGrad) {
        // It ends with the stage's all-reduce (first: the cause a walker names on a tie), which
        // starts when every peer has reached its REDUCE_GRAD.
        const std::int32_t c = ws.id.stage >= 0 && ws.id.stage < layout.pp
                                   ? collective_of[static_cast<std::size_t>(ws.id.stage)]
                                   : -1;
        add(n, c, 0);
        after_compute(n);
        if (c >= 0) after_compute(c);
        last_compute = n;
        continue;
      }
      duration[static_cast<std::size_t>(n)] = durations.action(ws.id, a);
      after_compute(n);
      if (is_compute(a.type) && ActionIndex::fits(layout, ws.id, a)) {
        for (const DataInput& input : data_inputs(a.type, a.virtual_stage, last)) {
          const std::int32_t p =
              input.producer == Producer::kForward
                  ? index.first(ChunkAction::kF, a.owner, input.virtual_stage, a.microbatch)
                  : index.first_backward(a.owner, input.virtual_stage, a.microbatch);
          if (p < 0) continue;
          const std::int32_t pw = worker_of(p);
          if (pw == w) {
            add(n, p, 0);
            continue;
          }
          if (runtime) {
            const std::int32_t r = index.first(*chunk_action(recv_for(input.producer)), a.owner,
                                               a.virtual_stage, a.microbatch);
            if (r >= 0 && worker_of(r) == w) {
              after_comm(n, r, 0);
              continue;
            }
            // A compute-only schedule says nothing of its communication: it is lowered before it
            // runs, so here its data arrives as on the direct network. A lowered one must post a
            // RECV for it.
            if (lowered) {
              const Action recv{recv_for(input.producer), a.virtual_stage, a.microbatch, a.owner};
              throw InputError(source, where(ws, a) + ": needs data made on worker " +
                                           to_string(id_of(pw)) + " but lists no " +
                                           to_token(recv, ws.id.dp));
            }
            add(n, p, 0);
            continue;
          }
          const auto send =
              output_of(action_at(pw, position[static_cast<std::size_t>(p)].index), last);
          add(n, p, 0, send ? durations.transfer(id_of(pw), ws.id, *send) : 0);
        }
      } else if (a.type == ActionType::kOptimizer) {
        if (runtime && last_comm >= 0) after_comm(n, last_comm, 0);
        if (barrier >= 0) {
          add(n, barrier, 0);
          after_compute(barrier);  // the worker reaches the barrier when its OPT could start
          if (runtime && last_comm >= 0) after_comm(barrier, last_comm, 0);
        }
      }
      last_compute = n;
    }
  }
  for (std::size_t t = 0; t < ends.size(); ++t) {
    const auto [s, r] = ends[t];
    const std::int32_t node = first_transfer + static_cast<std::int32_t>(t);
    kind[static_cast<std::size_t>(node)] = NodeKind::kTransfer;
    number[static_cast<std::size_t>(node)] = static_cast<std::int32_t>(t);
    const Position from = position[static_cast<std::size_t>(s)];
    const Position to = position[static_cast<std::size_t>(r)];
    duration[static_cast<std::size_t>(node)] = durations.transfer(
        id_of(from.worker), id_of(to.worker), action_at(from.worker, from.index));
    edges.open(node);
    add(node, s, 0);
    if (!options.eager_sends) add(node, r, 0);
  }
  for (std::size_t c = 0; c < collectives.size(); ++c) {
    const auto node = static_cast<std::size_t>(collectives[c]);
    kind[node] = NodeKind::kCollective;
    number[node] = static_cast<std::int32_t>(c);
    const std::int32_t stage = collective_stage_[c];
    duration[node] = durations.all_reduce(stage, peers[static_cast<std::size_t>(stage)]);
  }
  if (barrier >= 0) kind[static_cast<std::size_t>(barrier)] = NodeKind::kBarrier;
  edges.close();

  renumber(edges, kind, duration, position, number);
  for (std::int32_t& n : list_node) n = rename_[static_cast<std::size_t>(n)];
  list_node_ = std::move(list_node);
  for (const auto& [s, r] : ends) {
    transfer_ends_.emplace_back(rename_[static_cast<std::size_t>(s)],
                                rename_[static_cast<std::size_t>(r)]);
  }
  for (std::size_t t = 0; t < ends.size(); ++t)
    transfer_node_.push_back(rename_[static_cast<std::size_t>(first_transfer) + t]);
  for (const std::int32_t c : collectives)
    collective_node_.push_back(rename_[static_cast<std::size_t>(c)]);
  rename_ = {};
}

void ExecutionGraph::renumber(const detail::EdgeBuffer& edges, const std::vector<NodeKind>& kind,
                              const std::vector<Nanos>& duration,
                              const std::vector<Position>& position,
                              const std::vector<std::int32_t>& number) {
  // Kahn's algorithm with a stack (depth first, so a worker's list is followed as far as it can
  // be); each node gets the next number when it is taken, and its edges are copied then, so they
  // come out in the new order in one pass.
  const std::size_t n = kind.size();
  std::vector<std::int32_t> first_out(n + 1, 0);
  std::vector<std::int32_t> waiting(n, 0);
  for (std::size_t v = 0; v < n; ++v) {
    for (std::int32_t e = edges.begin(v); e < edges.end(v); ++e) {
      const std::uint32_t p = edges.pred(e);
      if (p >> 31) continue;
      ++first_out[(p & kFrom) + 1];
      ++waiting[v];
    }
  }
  for (std::size_t v = 0; v < n; ++v) first_out[v + 1] += first_out[v];
  std::vector<std::int32_t> out(static_cast<std::size_t>(first_out[n]));
  {
    std::vector<std::int32_t> fill(first_out.begin(), first_out.end() - 1);
    for (std::size_t v = 0; v < n; ++v) {
      for (std::int32_t e = edges.begin(v); e < edges.end(v); ++e) {
        const std::uint32_t p = edges.pred(e);
        if (p >> 31) continue;
        out[static_cast<std::size_t>(fill[p & kFrom]++)] = static_cast<std::int32_t>(v);
      }
    }
  }
  rename_.assign(n, -1);
  kind_.resize(n);
  duration_.resize(n);
  position_.resize(n);
  transfer_index_.resize(n);
  first_edge_.assign(n + 1, 0);
  pred_.reserve(edges.size());
  if (edges.delays()) delay_.reserve(edges.size());
  std::vector<std::int32_t> previous_iteration;  // edges whose source is renamed at the end
  const auto take = [&](std::size_t old, std::size_t k) {
    rename_[old] = static_cast<std::int32_t>(k);
    kind_[k] = kind[old];
    duration_[k] = duration[old];
    position_[k] = position[old];
    transfer_index_[k] = number[old];
    for (std::int32_t e = edges.begin(old); e < edges.end(old); ++e) {
      const std::uint32_t p = edges.pred(e);
      if (p >> 31) {
        previous_iteration.push_back(static_cast<std::int32_t>(pred_.size()));
        pred_.push_back(p);
      } else {
        pred_.push_back(static_cast<std::uint32_t>(rename_[p & kFrom]));
      }
      if (edges.delays()) delay_.push_back(edges.delay(e));
    }
    first_edge_[k + 1] = static_cast<std::int32_t>(pred_.size());
  };
  std::vector<std::int32_t> stack;
  for (std::size_t v = n; v-- > 0;) {
    if (waiting[v] == 0) stack.push_back(static_cast<std::int32_t>(v));
  }
  std::size_t next = 0;
  while (!stack.empty()) {
    const auto v = static_cast<std::size_t>(stack.back());
    stack.pop_back();
    take(v, next++);
    // The node numbered right after it (provisionally: its worker's next list action) goes on
    // top, so the walk follows a list while it can and reads the buffers front to back.
    bool follow = false;
    for (std::int32_t k = first_out[v]; k < first_out[v + 1]; ++k) {
      const std::int32_t to = out[static_cast<std::size_t>(k)];
      if (--waiting[static_cast<std::size_t>(to)] != 0) continue;
      if (static_cast<std::size_t>(to) == v + 1) {
        follow = true;
      } else {
        stack.push_back(to);
      }
    }
    if (follow) stack.push_back(static_cast<std::int32_t>(v + 1));
  }
  if (next < n) {
    // A cycle: keep the numbers and mark the nodes that were never reached.
    stuck_.assign(n, 1);
    for (std::size_t v = 0; v < n; ++v) {
      if (rename_[v] >= 0) stuck_[v] = 0;
    }
    pred_.clear();
    delay_.clear();
    previous_iteration.clear();
    for (std::size_t v = 0; v < n; ++v) rename_[v] = static_cast<std::int32_t>(v);
    for (std::size_t v = 0; v < n; ++v) take(v, v);
  }
  for (const std::int32_t e : previous_iteration) {
    std::uint32_t& p = pred_[static_cast<std::size_t>(e)];
    p = static_cast<std::uint32_t>(rename_[p & kFrom]) | (p & ~kFrom);
    carried_.push_back(static_cast<std::int32_t>(p & kFrom));
  }
  std::sort(carried_.begin(), carried_.end());
  carried_.erase(std::unique(carried_.begin(), carried_.end()), carried_.end());
}

void ExecutionGraph::reorder(std::int32_t worker, std::span<const std::int32_t> nodes) {
  const std::int32_t size = list_size(worker);
  const std::int32_t opt = node(worker, size - 1);
  const std::int32_t reduce = node(worker, size - 2);
  RECYCLE_ASSERT(size == static_cast<std::int32_t>(nodes.size()) + 2 &&
                     action(worker, size - 1).type == ActionType::kOptimizer &&
                     action(worker, size - 2).type == ActionType::kReduceGrad,
                 "reorder() takes every compute action of a compute-only worker");
  // The rules of build(): a compute's first edge is its stream predecessor (the first compute's
  // is the previous iteration's OPT); REDUCE_GRAD's second, after its all-reduce; the all-reduce
  // hears from the worker's last compute.
  const auto set = [this](std::int32_t e, std::int32_t from, std::int32_t distance) {
    pred_[static_cast<std::size_t>(e)] =
        static_cast<std::uint32_t>(from) | (static_cast<std::uint32_t>(distance) << 31);
  };
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    set(first_edge(nodes[k]), k == 0 ? opt : nodes[k - 1], k == 0 ? 1 : 0);
  }
  const std::int32_t last = nodes.empty() ? opt : nodes.back();
  const std::int32_t last_distance = nodes.empty() ? 1 : 0;
  const std::int32_t collective = edge(first_edge(reduce)).from;
  set(first_edge(reduce) + 1, last, last_distance);
  for (std::int32_t e = first_edge(collective); e < first_edge(collective + 1); ++e) {
    const Edge arrival = edge(e);
    if (kind(arrival.from) == NodeKind::kAction && position(arrival.from).worker == worker) {
      set(e, last, last_distance);
    }
  }
  reordered_ = true;
}

std::optional<std::vector<std::int32_t>> ExecutionGraph::topological_order() const {
  const auto n = static_cast<std::size_t>(nodes());
  std::vector<std::int32_t> first_out(n + 1, 0);
  std::vector<std::int32_t> waiting(n, 0);
  for (std::size_t v = 0; v < n; ++v) {
    for (std::int32_t e = first_edge_[v]; e < first_edge_[v + 1]; ++e) {
      const std::uint32_t p = pred_[static_cast<std::size_t>(e)];
      if (p >> 31) continue;
      ++first_out[p + 1];
      ++waiting[v];
    }
  }
  for (std::size_t v = 0; v < n; ++v) first_out[v + 1] += first_out[v];
  std::vector<std::int32_t> out(static_cast<std::size_t>(first_out[n]));
  std::vector<std::int32_t> fill(first_out.begin(), first_out.end() - 1);
  for (std::size_t v = 0; v < n; ++v) {
    for (std::int32_t e = first_edge_[v]; e < first_edge_[v + 1]; ++e) {
      const std::uint32_t p = pred_[static_cast<std::size_t>(e)];
      if (p >> 31) continue;
      out[static_cast<std::size_t>(fill[p]++)] = static_cast<std::int32_t>(v);
    }
  }
  std::vector<std::int32_t> order;
  order.reserve(n);
  for (std::size_t v = 0; v < n; ++v) {
    if (waiting[v] == 0) order.push_back(static_cast<std::int32_t>(v));
  }
  for (std::size_t head = 0; head < order.size(); ++head) {
    const auto v = static_cast<std::size_t>(order[head]);
    for (std::int32_t k = first_out[v]; k < first_out[v + 1]; ++k) {
      const std::int32_t to = out[static_cast<std::size_t>(k)];
      if (--waiting[static_cast<std::size_t>(to)] == 0) order.push_back(to);
    }
  }
  if (order.size() != n) return std::nullopt;
  return order;
}

namespace {

/// One node of a sweep: its start from its edges, its end, its cause.
template <bool kDelays>
inline void time_node(std::size_t node, const std::int32_t* first_edge, const std::uint32_t* pred,
                      const Nanos* delay, const Nanos* duration, const Nanos* previous_end,
                      Nanos* start, Nanos* end, std::int32_t* cause) {
  Nanos at = 0;
  std::int32_t why = -1;
  for (std::int32_t k = first_edge[node]; k < first_edge[node + 1]; ++k) {
    const std::uint32_t p = pred[k];
    Nanos t = 0;
    if ((p >> 31) == 0) {
      t = end[p];
    } else if (previous_end != nullptr) {
      t = previous_end[p & kFrom];
    } else {
      continue;
    }
    if constexpr (kDelays) t += delay[k];
    if (why < 0 || t > at) {
      at = std::max(at, t);
      why = k;
    }
  }
  start[node] = at;
  end[node] = at + duration[node];
  if (cause != nullptr) cause[node] = why;
}

}  // namespace

void ExecutionGraph::sweep(std::span<const Nanos> previous_end, std::span<Nanos> start,
                           std::span<Nanos> end, std::span<std::int32_t> cause) const {
  RECYCLE_ASSERT(ordered(), "timing a schedule that deadlocks, or reordered: walk an order");
  const Nanos* previous = previous_end.empty() ? nullptr : previous_end.data();
  std::int32_t* why = cause.empty() ? nullptr : cause.data();
  const std::size_t n = kind_.size();
  if (delay_.empty()) {
    for (std::size_t node = 0; node < n; ++node) {
      time_node<false>(node, first_edge_.data(), pred_.data(), nullptr, duration_.data(), previous,
                       start.data(), end.data(), why);
    }
  } else {
    for (std::size_t node = 0; node < n; ++node) {
      time_node<true>(node, first_edge_.data(), pred_.data(), delay_.data(), duration_.data(),
                      previous, start.data(), end.data(), why);
    }
  }
}

void ExecutionGraph::sweep(std::span<const std::int32_t> order, std::span<const Nanos> previous_end,
                           std::span<Nanos> start, std::span<Nanos> end,
                           std::span<std::int32_t> cause) const {
  const Nanos* previous = previous_end.empty() ? nullptr : previous_end.data();
  std::int32_t* why = cause.empty() ? nullptr : cause.data();
  for (const std::int32_t node : order) {
    if (delay_.empty()) {
      time_node<false>(static_cast<std::size_t>(node), first_edge_.data(), pred_.data(), nullptr,
                       duration_.data(), previous, start.data(), end.data(), why);
    } else {
      time_node<true>(static_cast<std::size_t>(node), first_edge_.data(), pred_.data(),
                      delay_.data(), duration_.data(), previous, start.data(), end.data(), why);
    }
  }
}

}  // namespace recycle::planner
