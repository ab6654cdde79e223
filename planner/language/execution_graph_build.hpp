// The edges the rules give (docs/architecture.md, "Semantics"), as ExecutionGraph::build turns a
// schedule into its timed graph: each list action's stream, data, transfer, all-reduce and
// optimizer predecessors (asked of planner/language/semantics.hpp), numbered in a topological
// order when there is one. A template over where the times come from (`Durations`: action(worker,
// action), transfer(from, to, send), all_reduce(stage, peers)), so it is included only where a
// graph is built from times: execution_graph.cpp (a function of the action, a free network) and
// planner/timing/cost_graph.cpp (a cost model's). How the nodes are stored and walked is
// execution_graph.hpp's.
#pragma once

#include <algorithm>
#include <array>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "planner/language/dependency_graph.hpp"
#include "planner/language/execution_graph.hpp"
#include "planner/language/semantics.hpp"

namespace recycle::planner {

namespace graph_build {

inline constexpr std::uint32_t kFrom = 0x7fff'ffffU;
inline constexpr std::uint32_t kPrevious = 0x8000'0000U;

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

inline std::string where(const WorkerSchedule& ws, const Action& a) {
  return "worker " + to_string(ws.id) + " action " + to_token(a, ws.id.dp);
}

}  // namespace graph_build

template <typename Durations>
void ExecutionGraph::build(const Schedule& schedule, const ActionIndex& index,
                           const Durations& durations, const GraphOptions& options,
                           const std::string& source) {
  using namespace graph_build;
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
  // Two weight versions (2bw) step each stage on its own, whatever the options say.
  const bool staggered = options.staggered_optimizer || schedule.weight_versions == 2;
  const std::int32_t barrier = staggered ? -1 : next++;
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
        const std::int32_t distance = data_distance(a.lag, action_of(made).lag);
        if (distance < 0) {
          throw InputError(source, where(schedule.workers[static_cast<std::size_t>(l.worker)], a) +
                                       ": reads data of a later iteration (" +
                                       to_token(action_of(made), id_of(maker).dp) + " on worker " +
                                       to_string(id_of(maker)) + ")");
        }
        if (maker == l.worker) {
          out.add(made, distance);
          continue;
        }
        if (runtime) {
          const std::int32_t r = index.first(*chunk_action(recv_for(input.producer)), a.owner,
                                             a.virtual_stage, a.microbatch);
          if (r >= 0 && lists[static_cast<std::size_t>(r)].worker == l.worker) {
            after_comm(out, r, data_distance(a.lag, action_of(r).lag));
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
          out.add(made, distance);
          continue;
        }
        const Action producer{input.producer == Producer::kForward ? ActionType::kForward
                                                                   : ActionType::kBackwardInput,
                              input.virtual_stage, a.microbatch, a.owner};
        const auto send = output_of(producer, last);
        out.add(made, distance, send ? durations.transfer(id_of(maker), id, *send) : 0);
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
  if (schedule.has_lags()) {
    // The first iteration has no iteration before it: its lagged actions, their transfers and
    // all-reduces (every arrival lagged) run nothing there (first_duration_).
    std::vector<char> lagged(nodes, 0);
    for (std::size_t k = 0; k < nodes; ++k) {
      if (kind_[k] == NodeKind::kAction) {
        lagged[k] = action(position_[k].worker, position_[k].index).lag != 0 ? 1 : 0;
      }
    }
    for (std::size_t t = 0; t < transfer_node_.size(); ++t) {
      lagged[static_cast<std::size_t>(transfer_node_[t])] =
          lagged[static_cast<std::size_t>(transfer_ends_[t].first)];
    }
    for (const std::int32_t c : collective_node_) {
      bool all = true;
      for (std::int32_t e = first_edge_[static_cast<std::size_t>(c)];
           e < first_edge_[static_cast<std::size_t>(c) + 1]; ++e) {
        const std::uint32_t p = pred_[static_cast<std::size_t>(e)];
        if ((p & kPrevious) == 0 && !lagged[p & kFrom]) all = false;
      }
      lagged[static_cast<std::size_t>(c)] = all ? 1 : 0;
    }
    first_duration_ = duration_;
    for (std::size_t k = 0; k < nodes; ++k) {
      if (lagged[k]) first_duration_[k] = 0;
    }
  }
}

}  // namespace recycle::planner
