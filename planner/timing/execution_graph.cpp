#include "planner/timing/execution_graph.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "planner/language/semantics.hpp"
#include "planner/timing/dependency_graph.hpp"

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
    return model.all_reduce_time(stage, peers);
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

std::vector<std::vector<WorkerId>> all_reduce_peers(const Schedule& schedule) {
  const std::int32_t pp = schedule.layout.pp;
  std::vector<std::vector<WorkerId>> peers(static_cast<std::size_t>(std::max(pp, 0)));
  for (const WorkerSchedule& ws : schedule.workers) {
    if (ws.id.stage >= 0 && ws.id.stage < pp)
      peers[static_cast<std::size_t>(ws.id.stage)].push_back(ws.id);
  }
  return peers;
}

ExecutionGraph::ExecutionGraph(const Schedule& schedule, const CostModel& model,
                               const GraphOptions& options, const std::string& source) {
  build(schedule, ActionIndex(schedule), ModelDurations{model}, options, source);
}

ExecutionGraph::ExecutionGraph(const Schedule& schedule, const ActionIndex& index,
                               const CostModel& model, const GraphOptions& options,
                               const std::string& source) {
  build(schedule, index, ModelDurations{model}, options, source);
}

ExecutionGraph::ExecutionGraph(const Schedule& schedule, const ActionDuration& duration,
                               const GraphOptions& options, const std::string& source) {
  build(schedule, ActionIndex(schedule), FunctionDurations{duration}, options, source);
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
constexpr std::uint32_t kPrevious = 0x8000'0000U;

/// An edge as the rules give it, before the nodes are numbered: `from` is a provisional number.
struct Pred {
  std::int32_t from = -1;
  std::int32_t distance = 0;
  Nanos delay = 0;
};

/// The edges of one list node (at most a stream predecessor, a communication predecessor and two
/// data inputs, each of which may need a transfer and its RECV).
struct ListPreds {
  std::array<Pred, 8> at{};
  std::int32_t size = 0;

  void add(std::int32_t from, std::int32_t distance, Nanos delay = 0) {
    if (from < 0) return;
    at[static_cast<std::size_t>(size++)] = {from, distance, delay};
  }
  [[nodiscard]] std::span<const Pred> view() const {
    return {at.data(), static_cast<std::size_t>(size)};
  }
};

/// A list node: its place, and the nearest earlier node of each stream in its worker's list.
struct ListNode {
  std::int32_t worker = -1;
  std::int32_t index = -1;
  std::int32_t compute_before = -1;  ///< provisional number, -1: none
  std::int32_t comm_before = -1;
};

}  // namespace

template <typename Durations>
void ExecutionGraph::build(const Schedule& schedule, const ActionIndex& index,
                           const Durations& durations, const GraphOptions& options,
                           const std::string& source) {
  schedule_ = &schedule;
  source_ = source;
  const Layout& layout = schedule.layout;
  const std::int32_t last = layout.pp * layout.interleave - 1;
  const bool runtime = options.network == Network::kRuntime;
  const bool lowered = schedule.is_lowered();
  const std::int32_t actions = index.actions();
  const auto workers = static_cast<std::int32_t>(schedule.workers.size());

  // Provisional numbers: the actions as ActionIndex numbers them, then the implied REDUCE_GRAD/OPT,
  // the transfers, the all-reduces, the barrier. The final numbers are given by the walk below.
  std::vector<std::int32_t> list_node;  // provisional, in list order
  list_begin_.assign(1, 0);
  implied_.assign(schedule.workers.size(), {});
  std::int32_t next = actions;
  for (std::int32_t w = 0; w < workers; ++w) {
    const WorkerSchedule& ws = schedule.workers[static_cast<std::size_t>(w)];
    for (std::size_t i = 0; i < ws.actions.size(); ++i)
      list_node.push_back(index.node(w, static_cast<std::int32_t>(i)));
    implied_[static_cast<std::size_t>(w)] = implied_actions(ws);
    for (std::size_t k = 0; k < implied_[static_cast<std::size_t>(w)].size(); ++k)
      list_node.push_back(next++);
    list_begin_.push_back(static_cast<std::int32_t>(list_node.size()));
  }
  const std::int32_t list_nodes = next;
  const auto id_of = [&](std::int32_t worker) {
    return schedule.workers[static_cast<std::size_t>(worker)].id;
  };

  // Each worker's two streams in list order, and for every list node the nearest earlier node of
  // each stream: the predecessors the stream rules name.
  std::vector<ListNode> lists(static_cast<std::size_t>(list_nodes));
  std::vector<std::int32_t> stream_node;  // per stream 2w (compute), 2w + 1 (communication)
  stream_node.reserve(list_node.size());
  std::vector<std::int32_t> cursor, stream_end;
  std::vector<std::int32_t> final_compute(static_cast<std::size_t>(workers), -1);
  std::vector<std::int32_t> final_comm(static_cast<std::size_t>(workers), -1);
  for (std::int32_t w = 0; w < workers; ++w) {
    std::int32_t compute = -1, comm = -1;
    for (std::int32_t i = 0; i < list_size(w); ++i) {
      const std::int32_t p =
          list_node[static_cast<std::size_t>(list_begin_[static_cast<std::size_t>(w)] + i)];
      lists[static_cast<std::size_t>(p)] = {w, i, compute, comm};
      (stream_of(action(w, i).type) == Stream::kCompute ? compute : comm) = p;
    }
    final_compute[static_cast<std::size_t>(w)] = compute;
    final_comm[static_cast<std::size_t>(w)] = comm;
    for (const Stream stream : {Stream::kCompute, Stream::kComm}) {
      cursor.push_back(static_cast<std::int32_t>(stream_node.size()));
      for (std::int32_t i = 0; i < list_size(w); ++i) {
        if (stream_of(action(w, i).type) == stream)
          stream_node.push_back(
              list_node[static_cast<std::size_t>(list_begin_[static_cast<std::size_t>(w)] + i)]);
      }
      stream_end.push_back(static_cast<std::int32_t>(stream_node.size()));
    }
  }
  const auto action_of = [&](std::int32_t p) -> const Action& {
    const ListNode& l = lists[static_cast<std::size_t>(p)];
    return action(l.worker, l.index);
  };

  // Runtime network: one transfer per SEND, matched with the RECV its partner rule names on the
  // worker the routes name.
  std::vector<std::int32_t> transfer_of(static_cast<std::size_t>(actions), -1);  // transfer number
  std::vector<std::pair<std::int32_t, std::int32_t>> ends;                       // SEND, RECV
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
        if (r < 0 || id_of(lists[static_cast<std::size_t>(r)].worker) != to) {
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
            index.indexes(ws.id, a) &&
            index.count(*chunk_action(a.type), a.owner, a.virtual_stage, a.microbatch) > 1;
        throw InputError(source,
                         where(ws, a) + (twice ? " is listed twice" : ": no SEND delivers it"));
      }
    }
  }
  const std::int32_t first_transfer = next;
  next += static_cast<std::int32_t>(ends.size());

  // One all-reduce per stage with live workers, then the barrier.
  const std::vector<std::vector<WorkerId>> peers = all_reduce_peers(schedule);
  std::vector<std::int32_t> collective_of(peers.size(), -1);
  const std::int32_t first_collective = next;
  for (std::size_t s = 0; s < peers.size(); ++s) {
    if (peers[s].empty()) continue;
    collective_of[s] = next++;
    collective_stage_.push_back(static_cast<std::int32_t>(s));
  }
  const std::int32_t barrier = options.staggered_optimizer ? -1 : next++;
  const auto nodes = static_cast<std::size_t>(next);

  // The stream rules: a node waits for the compute before it in its list (in this iteration, else
  // the previous one's last); a SEND/RECV has completed when its transfer has, and with eager
  // sends a RECV also when it was posted (the data may have come first).
  const auto after_compute = [&](ListPreds& out, const ListNode& l) {
    if (l.compute_before >= 0) {
      out.add(l.compute_before, 0);
    } else {
      out.add(final_compute[static_cast<std::size_t>(l.worker)], 1);
    }
  };
  const auto after_comm = [&](auto& out, std::int32_t comm, std::int32_t distance) {
    const std::int32_t t = transfer_of[static_cast<std::size_t>(comm)];
    out.add(first_transfer + t, distance);
    if (options.eager_sends && ends[static_cast<std::size_t>(t)].second == comm)
      out.add(comm, distance);
  };
  // The arrivals at each all-reduce (a worker's REDUCE_GRAD: when the compute before it ended) and
  // at the barrier (a worker's OPT: when it could start), in worker order.
  struct Arrivals {
    std::vector<Pred> at;
    void add(std::int32_t from, std::int32_t distance) {
      if (from >= 0) at.push_back({from, distance, 0});
    }
  };
  std::vector<Arrivals> arrivals(nodes - static_cast<std::size_t>(first_transfer));
  const auto arrivals_of = [&](std::int32_t node) -> Arrivals& {
    return arrivals[static_cast<std::size_t>(node - first_transfer)];
  };
  for (std::int32_t w = 0; w < workers; ++w) {
    const WorkerId id = id_of(w);
    for (std::int32_t i = 0; i < list_size(w); ++i) {
      const ActionType type = action(w, i).type;
      const ListNode& l = lists[static_cast<std::size_t>(
          list_node[static_cast<std::size_t>(list_begin_[static_cast<std::size_t>(w)] + i)])];
      if (type == ActionType::kReduceGrad && id.stage >= 0 && id.stage < layout.pp) {
        ListPreds p;
        after_compute(p, l);
        arrivals_of(collective_of[static_cast<std::size_t>(id.stage)])
            .add(p.at[0].from, p.at[0].distance);
      } else if (type == ActionType::kOptimizer && barrier >= 0) {
        ListPreds p;
        after_compute(p, l);
        if (runtime && l.comm_before >= 0) after_comm(p, l.comm_before, 0);
        for (const Pred& pred : p.view()) arrivals_of(barrier).add(pred.from, pred.distance);
      }
    }
  }

  // The rules of one list node, in the order a walker's tie follows (a stream predecessor first).
  const auto rules = [&](std::int32_t p, ListPreds& out) {
    out.size = 0;
    const ListNode& l = lists[static_cast<std::size_t>(p)];
    const Action& a = action(l.worker, l.index);
    const WorkerId id = id_of(l.worker);
    if (stream_of(a.type) == Stream::kComm) {
      if (runtime) {
        if (l.comm_before >= 0) {
          after_comm(out, l.comm_before, 0);
        } else if (final_comm[static_cast<std::size_t>(l.worker)] >= 0) {
          after_comm(out, final_comm[static_cast<std::size_t>(l.worker)], 1);
        }
      }
      after_compute(out, l);
      return;
    }
    if (a.type == ActionType::kReduceGrad) {
      // It ends with the stage's all-reduce (first: the cause a walker names on a tie), which
      // starts when every peer has reached its REDUCE_GRAD.
      out.add(id.stage >= 0 && id.stage < layout.pp
                  ? collective_of[static_cast<std::size_t>(id.stage)]
                  : -1,
              0);
      after_compute(out, l);
      return;
    }
    after_compute(out, l);
    if (is_compute(a.type) && index.indexes(id, a)) {
      for (const DataInput& input : data_inputs(a.type, a.virtual_stage, last)) {
        const std::int32_t made =
            input.producer == Producer::kForward
                ? index.first(ChunkAction::kF, a.owner, input.virtual_stage, a.microbatch)
                : index.first_backward(a.owner, input.virtual_stage, a.microbatch);
        if (made < 0) continue;
        const std::int32_t maker = lists[static_cast<std::size_t>(made)].worker;
        if (maker == l.worker) {
          out.add(made, 0);
          continue;
        }
        if (runtime) {
          const std::int32_t r = index.first(*chunk_action(recv_for(input.producer)), a.owner,
                                             a.virtual_stage, a.microbatch);
          if (r >= 0 && lists[static_cast<std::size_t>(r)].worker == l.worker) {
            after_comm(out, r, 0);
            continue;
          }
          // A compute-only schedule says nothing of its communication: it is lowered before it
          // runs, so here its data arrives as on the direct network. A lowered one must post a
          // RECV for it.
          if (lowered) {
            const Action recv{recv_for(input.producer), a.virtual_stage, a.microbatch, a.owner};
            throw InputError(source,
                             where(schedule.workers[static_cast<std::size_t>(l.worker)], a) +
                                 ": needs data made on worker " + to_string(id_of(maker)) +
                                 " but lists no " + to_token(recv, id.dp));
          }
          out.add(made, 0);
          continue;
        }
        const Action producer{input.producer == Producer::kForward ? ActionType::kForward
                                                                   : ActionType::kBackwardInput,
                              input.virtual_stage, a.microbatch, a.owner};
        const auto send = output_of(producer, last);
        out.add(made, 0, send ? durations.transfer(id_of(maker), id, *send) : 0);
      }
    } else if (a.type == ActionType::kOptimizer) {
      if (runtime && l.comm_before >= 0) after_comm(out, l.comm_before, 0);
      if (barrier >= 0) out.add(barrier, 0);
    }
  };

  // The walk: each worker's streams run in list order as far as they can; a stream stops at a node
  // with an unnumbered predecessor on another list and waits on it, and goes on when that one is
  // numbered. This finds every node that can run, because each stream is a chain of the graph
  // (every node of a stream waits for the stream's previous one, directly or through its transfer;
  // on the direct network a SEND/RECV waits only for the compute before it, so the ready ones are
  // a prefix). Nodes on no list (transfers, all-reduces, the barrier) are numbered when a list
  // node needs them and they can be. Each node's edges go into the graph when it is numbered, so
  // the graph comes out in one pass, and a worker's nodes mostly follow each other.
  std::vector<std::int32_t> number(nodes, -1);  // provisional -> final
  kind_.resize(nodes);
  duration_.resize(nodes);
  position_.resize(nodes);
  transfer_index_.resize(nodes);
  first_edge_.assign(nodes + 1, 0);
  pred_.reserve(nodes * 2 + nodes / 2);
  std::vector<std::int32_t> previous_iteration;  // edges whose source is numbered at the end
  std::int32_t numbered = 0;
  bool delays = false;
  const auto emit = [&](std::int32_t p, std::span<const Pred> preds, NodeKind kind, Nanos duration,
                        Position position, std::int32_t transfer) {
    const auto k = static_cast<std::size_t>(number[static_cast<std::size_t>(p)] >= 0
                                                ? number[static_cast<std::size_t>(p)]
                                                : numbered++);
    number[static_cast<std::size_t>(p)] = static_cast<std::int32_t>(k);
    kind_[k] = kind;
    duration_[k] = std::min(duration, kMaxClock);
    position_[k] = position;
    transfer_index_[k] = transfer;
    for (const Pred& pred : preds) {
      if (pred.distance != 0) {
        previous_iteration.push_back(static_cast<std::int32_t>(pred_.size()));
        pred_.push_back(static_cast<std::uint32_t>(pred.from) | kPrevious);
      } else {
        pred_.push_back(static_cast<std::uint32_t>(number[static_cast<std::size_t>(pred.from)]));
      }
      if (pred.delay != 0 && !delays) {  // delays are stored once one is not zero
        delays = true;
        delay_.assign(pred_.size() - 1, 0);
      }
      if (delays) delay_.push_back(std::min(pred.delay, kMaxClock));
    }
    first_edge_[k + 1] = static_cast<std::int32_t>(pred_.size());
  };
  const auto emit_list = [&](std::int32_t p, const ListPreds& preds) {
    const ListNode& l = lists[static_cast<std::size_t>(p)];
    const Action& a = action(l.worker, l.index);
    const bool timed = stream_of(a.type) == Stream::kCompute && a.type != ActionType::kReduceGrad;
    emit(p, preds.view(), NodeKind::kAction, timed ? durations.action(id_of(l.worker), a) : 0,
         {l.worker, l.index},
         runtime && p < actions ? transfer_of[static_cast<std::size_t>(p)] : -1);
  };
  // The predecessors of a node on no list: a transfer's SEND and RECV (its SEND alone with eager
  // sends), the arrivals at an all-reduce or the barrier.
  const auto other_preds = [&](std::int32_t p,
                               std::array<Pred, 2>& transfer) -> std::span<const Pred> {
    if (p < first_collective) {
      const auto [s, r] = ends[static_cast<std::size_t>(p - first_transfer)];
      transfer = {Pred{s, 0, 0}, Pred{r, 0, 0}};
      return {transfer.data(), options.eager_sends ? 1U : 2U};
    }
    return arrivals_of(p).at;
  };
  const auto emit_other = [&](std::int32_t p, std::span<const Pred> preds) {
    if (p < first_collective) {
      const auto t = static_cast<std::size_t>(p - first_transfer);
      const auto [s, r] = ends[t];
      const ListNode& from = lists[static_cast<std::size_t>(s)];
      const ListNode& to = lists[static_cast<std::size_t>(r)];
      emit(p, preds, NodeKind::kTransfer,
           durations.transfer(id_of(from.worker), id_of(to.worker), action_of(s)), {},
           static_cast<std::int32_t>(t));
    } else if (p != barrier) {
      const auto c = static_cast<std::size_t>(p - first_collective);
      const std::int32_t stage = collective_stage_[c];
      emit(p, preds, NodeKind::kCollective,
           durations.all_reduce(stage, peers[static_cast<std::size_t>(stage)]), {},
           static_cast<std::int32_t>(c));
    } else {
      emit(p, preds, NodeKind::kBarrier, 0, {}, -1);
    }
  };
  // Waiting: a stream waits on one node at a time, and so does a node on no list that cannot be
  // numbered yet; each waiter is on an intrusive list of the node it waits on. Waiter numbers:
  // stream s is s, the node on no list p is streams + (p - first_transfer).
  const auto streams = static_cast<std::int32_t>(cursor.size());
  std::vector<std::int32_t> first_waiter(nodes, -1);
  std::vector<std::int32_t> next_waiter(
      cursor.size() + nodes - static_cast<std::size_t>(first_transfer), -1);
  std::vector<char> waiting(nodes - static_cast<std::size_t>(first_transfer), 0);
  std::vector<std::int32_t> ready;  // streams that may go on
  std::vector<std::int32_t> retry;  // nodes on no list whose blocker is numbered
  ready.reserve(cursor.size());
  std::vector<std::int32_t> scanned(nodes - static_cast<std::size_t>(first_transfer), 0);
  std::array<Pred, 2> scratch{};
  const auto wait_on = [&](std::int32_t node, std::int32_t waiter) {
    next_waiter[static_cast<std::size_t>(waiter)] = first_waiter[static_cast<std::size_t>(node)];
    first_waiter[static_cast<std::size_t>(node)] = waiter;
  };
  const auto wake = [&](std::int32_t node) {
    for (std::int32_t w = first_waiter[static_cast<std::size_t>(node)]; w >= 0;
         w = next_waiter[static_cast<std::size_t>(w)]) {
      if (w < streams) {
        ready.push_back(w);
      } else {
        waiting[static_cast<std::size_t>(w - streams)] = 0;
        retry.push_back(first_transfer + (w - streams));
      }
    }
    first_waiter[static_cast<std::size_t>(node)] = -1;
  };
  // Numbers node `p` on no list if it can be, pulling in those it needs; else it waits on the
  // first predecessor that is not numbered and the function returns false. Its predecessors are
  // checked once each (a numbered one stays numbered).
  const auto try_other = [&](const auto& self, std::int32_t p) -> bool {
    if (number[static_cast<std::size_t>(p)] >= 0) return true;
    if (waiting[static_cast<std::size_t>(p - first_transfer)] != 0) return false;
    std::array<Pred, 2> own{};
    const std::span<const Pred> preds = other_preds(p, own);
    std::int32_t& from = scanned[static_cast<std::size_t>(p - first_transfer)];
    for (; from < static_cast<std::int32_t>(preds.size()); ++from) {
      const Pred& pred = preds[static_cast<std::size_t>(from)];
      if (pred.distance != 0 || number[static_cast<std::size_t>(pred.from)] >= 0) continue;
      if (pred.from >= list_nodes && self(self, pred.from)) continue;
      waiting[static_cast<std::size_t>(p - first_transfer)] = 1;
      wait_on(pred.from, streams + (p - first_transfer));
      return false;
    }
    emit_other(p, preds);
    wake(p);
    return true;
  };
  ListPreds preds;
  // Per stream, the edges of the node it stopped at and the first of them it waits for (-1: it
  // stopped at no node), so it goes on from there: the rules are read once per node.
  std::vector<ListPreds> stopped_preds(cursor.size());
  std::vector<std::int32_t> stopped_at(cursor.size(), -1);
  // Numbers list node `p`, the head of stream `s`, if it can be; else returns the node to wait on.
  const auto try_list = [&](std::size_t s, std::int32_t p) -> std::int32_t {
    ListPreds& own = stopped_preds[s];
    std::int32_t k = stopped_at[s];
    if (k < 0) {
      rules(p, own);
      k = 0;
    }
    for (; k < own.size; ++k) {
      const Pred& pred = own.at[static_cast<std::size_t>(k)];
      if (pred.distance != 0 || number[static_cast<std::size_t>(pred.from)] >= 0) continue;
      if (pred.from < list_nodes || !try_other(try_other, pred.from)) {
        stopped_at[s] = k;
        return pred.from;
      }
    }
    stopped_at[s] = -1;
    emit_list(p, own);
    wake(p);
    return -1;
  };
  const auto run = [&] {
    while (!ready.empty() || !retry.empty()) {
      if (!retry.empty()) {
        const std::int32_t p = retry.back();
        retry.pop_back();
        (void)try_other(try_other, p);
        continue;
      }
      const auto s = static_cast<std::size_t>(ready.back());
      ready.pop_back();
      for (; cursor[s] < stream_end[s]; ++cursor[s]) {
        const std::int32_t blocker = try_list(s, stream_node[static_cast<std::size_t>(cursor[s])]);
        if (blocker >= 0) {
          wait_on(blocker, static_cast<std::int32_t>(s));
          break;
        }
      }
    }
  };
  try {
    for (std::size_t s = cursor.size(); s-- > 0;) ready.push_back(static_cast<std::int32_t>(s));
    run();
    // Nodes on no list that no list node waits for (a last transfer nobody reads).
    for (auto p = static_cast<std::int32_t>(first_transfer); p < static_cast<std::int32_t>(nodes);
         ++p) {
      (void)try_other(try_other, p);
    }
    run();
    if (numbered < static_cast<std::int32_t>(nodes)) {
      // A cycle: the nodes that never ran (those of the cycle and those waiting on one) are
      // numbered after the others, in list order, then with their edges.
      stuck_.assign(nodes, 0);
      std::vector<std::int32_t> rest;
      for (std::int32_t p : list_node) {
        if (number[static_cast<std::size_t>(p)] < 0) rest.push_back(p);
      }
      for (auto p = static_cast<std::int32_t>(first_transfer); p < static_cast<std::int32_t>(nodes);
           ++p) {
        if (number[static_cast<std::size_t>(p)] < 0) rest.push_back(p);
      }
      for (const std::int32_t p : rest) {
        stuck_[static_cast<std::size_t>(numbered)] = 1;
        number[static_cast<std::size_t>(p)] = numbered++;
      }
      for (const std::int32_t p : rest) {
        if (p < list_nodes) {
          rules(p, preds);
          emit_list(p, preds);
        } else {
          emit_other(p, other_preds(p, scratch));
        }
      }
    }
  } catch (const InputError&) {
    // Report the first problem in list order, whichever the walk met first.
    for (std::int32_t p : list_node) rules(p, preds);
    throw;
  }
  for (const std::int32_t e : previous_iteration) {
    std::uint32_t& p = pred_[static_cast<std::size_t>(e)];
    p = static_cast<std::uint32_t>(number[p & kFrom]) | kPrevious;
    carried_.push_back(static_cast<std::int32_t>(p & kFrom));
  }
  std::sort(carried_.begin(), carried_.end());
  carried_.erase(std::unique(carried_.begin(), carried_.end()), carried_.end());

  for (std::int32_t& n : list_node) n = number[static_cast<std::size_t>(n)];
  list_node_ = std::move(list_node);
  for (const auto& [s, r] : ends) {
    transfer_ends_.emplace_back(number[static_cast<std::size_t>(s)],
                                number[static_cast<std::size_t>(r)]);
  }
  for (std::size_t t = 0; t < ends.size(); ++t)
    transfer_node_.push_back(number[static_cast<std::size_t>(first_transfer) + t]);
  for (std::size_t c = 0; c < collective_stage_.size(); ++c)
    collective_node_.push_back(number[static_cast<std::size_t>(first_collective) + c]);
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
  // Ends and durations are at most kMaxClock and delays too, so at + duration fits in Nanos.
  start[node] = at;
  end[node] = std::min(at + duration[node], kMaxClock);
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
  check_clock(end);
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
  check_clock(end);
}

void refuse_clock(const std::string& source) {
  throw InputError(source, fmt::format("the schedule's timing passes {:.0f} years of simulated "
                                       "time, the most this tool represents: lower the costs "
                                       "(--costs, --profile, --job), --microbatches or "
                                       "--iterations",
                                       to_seconds(kMaxClock) / (365.25 * 86400)));
}

void ExecutionGraph::check_clock(std::span<const Nanos> end) const {
  for (std::int32_t w = 0; w < workers(); ++w) {
    if (end[static_cast<std::size_t>(node(w, list_size(w) - 1))] >= kMaxClock)
      refuse_clock(source_);
  }
}

}  // namespace recycle::planner
