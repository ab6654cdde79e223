// The timed dependency graph of a schedule: every action of one iteration as a node with a
// duration, and for each node the nodes it waits for, some of them in the previous iteration.
// This is the one place where the iteration-level rules of docs/architecture.md (streams,
// transfers, the gradient all-reduce, the optimizer barrier or stagger, the next iteration)
// become edges, from the per-action rules of planner/language/semantics.hpp. Its walkers: timing of
// one iteration (planner/language/timing.hpp), the steady-state period (steady_state.hpp),
// the lowering's placement (planner/language/lower.hpp), the validator (a cycle is a deadlock) and
// the simulator (sim/simulator.hpp), so a planner's prediction and a simulation of the same
// schedule cannot disagree.
//
// Concepts:
//  - Node: an action of a worker's list; the REDUCE_GRAD and OPT a worker implies when it lists
//    none (after its last action: the runtime all-reduces and steps after the schedule); one
//    transfer per SEND (runtime network); one all-reduce per stage; the optimizer barrier (barrier
//    mode). Nodes are numbered in a topological order of the same-iteration edges (found by running
//    each worker's streams as far as they go, so a worker's nodes mostly follow each other), so a
//    walk reads memory front to back; use node(),
//    position() and the transfer and all-reduce indexes rather than assuming a numbering.
//  - Edge: `from` -> node, meaning the node starts no earlier than `from` ended (in the previous
//    iteration when `distance` is 1) plus `delay`.
//  - Network::kDirect: data made on another worker reaches its consumer after the transfer time
//    (nothing on a free network) and waits for nothing else; SEND/RECV take no time.
//    Network::kRuntime: torch.distributed.pipelining's runtime on NCCL. Each worker posts its
//    SEND/RECV in list order on one communication stream; a posted operation starts when the
//    compute before it in the list has ended and the stream's previous operation is done; a
//    transfer runs when both its SEND and its RECV have started (rendezvous; eager sends: the
//    SEND alone) and holds both streams for latency + bytes / bandwidth; a compute that reads
//    received data waits for its RECV to complete. The next iteration's first actions wait for
//    the worker's OPT, and OPT waits for the worker's last SEND/RECV.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "planner/language/action.hpp"
#include "planner/language/schedule.hpp"

namespace recycle::planner {

class ActionIndex;

enum class Network : std::uint8_t { kDirect, kRuntime };

struct GraphOptions {
  Network network = Network::kDirect;
  bool staggered_optimizer = false;  ///< false: every OPT waits for a global barrier
  /// Runtime network: a transfer starts as soon as its SEND is posted, whether or not the RECV
  /// is (NCCL completes a send that fits the connection's buffer before the receive is posted).
  bool eager_sends = false;
};

/// The REDUCE_GRAD and OPT a worker's list implies: each of the two it does not list, in that
/// order, after its last action (the runtime all-reduces and steps after the schedule).
[[nodiscard]] std::vector<Action> implied_actions(const WorkerSchedule& worker);

/// The peers of each stage's gradient all-reduce (indexed by stage, size pp): every listed worker
/// of the stage, in list order.
[[nodiscard]] std::vector<std::vector<WorkerId>> all_reduce_peers(const Schedule& schedule);

/// Duration of an action on a worker (compute, OPT; SEND/RECV/REDUCE_GRAD take their time from
/// the network, so their duration here is ignored).
using ActionDuration = std::function<Nanos(WorkerId, const Action&)>;

/// What an error names when its caller gave no source for the schedule (one generated from
/// flags): the command line names the cost input it came from instead (tools/main.cpp).
inline const std::string kUnnamedSchedule = "schedule";

/// Throws the InputError of a schedule whose times reach kMaxClock (core/units.hpp), naming
/// `source`: one message for every walker that times schedules.
[[noreturn]] void refuse_clock(const std::string& source);

class ExecutionGraph {
 public:
  enum class NodeKind : std::uint8_t { kAction, kTransfer, kCollective, kBarrier };

  struct Edge {
    std::int32_t from = -1;
    std::int32_t distance = 0;  ///< 0: this iteration; 1: the previous one
    Nanos delay = 0;
  };

  /// Action durations from `duration`; transfers and all-reduces take no time (a cost model's
  /// graph, with its network: planner/timing/cost_graph.hpp). Throws InputError naming `source`
  /// when, on the runtime network, a SEND has no matching RECV, a RECV no SEND, or a lowered
  /// schedule's compute reads data made on another worker without a RECV. The graph reads actions
  /// from `schedule`, which must outlive it.
  ExecutionGraph(const Schedule& schedule, const ActionDuration& duration,
                 const GraphOptions& options, const std::string& source = kUnnamedSchedule);
  /// Times from `durations` (action(worker, action), transfer(from, to, send), all_reduce(stage,
  /// peers)), with an ActionIndex of `schedule` the caller has built; defined where the rules'
  /// edges are visible (execution_graph_build.hpp), which only the builders of graphs include.
  template <class Durations>
  ExecutionGraph(const Schedule& schedule, const ActionIndex& index, const Durations& durations,
                 const GraphOptions& options, const std::string& source) {
    build(schedule, index, durations, options, source);
  }

  [[nodiscard]] std::int32_t nodes() const noexcept {
    return static_cast<std::int32_t>(kind_.size());
  }
  [[nodiscard]] NodeKind kind(std::int32_t node) const noexcept {
    return kind_[static_cast<std::size_t>(node)];
  }
  [[nodiscard]] Nanos duration(std::int32_t node) const noexcept {
    return duration_[static_cast<std::size_t>(node)];
  }
  /// The edges into `node` are edge(first_edge(node)) .. edge(first_edge(node + 1) - 1), in the
  /// order the rules add them (a stream predecessor first, so a walker's tie goes to it).
  [[nodiscard]] std::int32_t first_edge(std::int32_t node) const noexcept {
    return first_edge_[static_cast<std::size_t>(node)];
  }
  [[nodiscard]] std::int32_t edges() const noexcept {
    return static_cast<std::int32_t>(pred_.size());
  }
  [[nodiscard]] Edge edge(std::int32_t e) const noexcept {
    const std::uint32_t p = pred_[static_cast<std::size_t>(e)];
    return {static_cast<std::int32_t>(p & kFromMask), static_cast<std::int32_t>(p >> 31),
            delay_.empty() ? 0 : delay_[static_cast<std::size_t>(e)]};
  }

  /// Workers, as in Schedule::workers; each list includes the implied REDUCE_GRAD/OPT.
  [[nodiscard]] std::int32_t workers() const noexcept {
    return static_cast<std::int32_t>(list_begin_.size()) - 1;
  }
  [[nodiscard]] std::int32_t list_size(std::int32_t worker) const noexcept {
    const auto w = static_cast<std::size_t>(worker);
    return list_begin_[w + 1] - list_begin_[w];
  }
  /// The node of position `index` of `worker`'s list (implied actions at the end).
  [[nodiscard]] std::int32_t node(std::int32_t worker, std::int32_t index) const noexcept {
    return list_node_[static_cast<std::size_t>(list_begin_[static_cast<std::size_t>(worker)] +
                                               index)];
  }
  /// The action of a list position (an implied REDUCE_GRAD/OPT included).
  [[nodiscard]] const Action& action(std::int32_t worker, std::int32_t index) const noexcept {
    const auto w = static_cast<std::size_t>(worker);
    const std::vector<Action>& listed = schedule_->workers[w].actions;
    if (static_cast<std::size_t>(index) < listed.size())
      return listed[static_cast<std::size_t>(index)];
    return implied_[w][static_cast<std::size_t>(index) - listed.size()];
  }
  /// How many REDUCE_GRAD/OPT the worker's list implies (0, 1 or 2; they follow its actions).
  [[nodiscard]] std::int32_t implied(std::int32_t worker) const noexcept;
  /// The worker and list position of an action node ({-1, -1} for other nodes).
  struct Position {
    std::int32_t worker = -1;
    std::int32_t index = -1;
  };
  [[nodiscard]] Position position(std::int32_t node) const noexcept {
    return position_[static_cast<std::size_t>(node)];
  }

  /// Transfers (runtime network), numbered 0.. in the order of their SENDs in the lists.
  [[nodiscard]] std::int32_t transfers() const noexcept {
    return static_cast<std::int32_t>(transfer_node_.size());
  }
  [[nodiscard]] std::int32_t transfer_node(std::int32_t t) const noexcept {
    return transfer_node_[static_cast<std::size_t>(t)];
  }
  /// The number of a transfer node, or of the transfer of a SEND/RECV node; -1 for others.
  [[nodiscard]] std::int32_t transfer_index(std::int32_t node) const noexcept {
    return transfer_index_[static_cast<std::size_t>(node)];
  }
  /// The transfer node of the SEND or RECV at `comm_node`, or -1 (direct network, or not one).
  [[nodiscard]] std::int32_t transfer_of(std::int32_t comm_node) const noexcept {
    if (kind(comm_node) != NodeKind::kAction) return -1;
    const std::int32_t t = transfer_index(comm_node);
    return t < 0 ? -1 : transfer_node(t);
  }
  /// The SEND and RECV action nodes of transfer `t`.
  [[nodiscard]] std::int32_t transfer_send(std::int32_t t) const noexcept {
    return transfer_ends_[static_cast<std::size_t>(t)].first;
  }
  [[nodiscard]] std::int32_t transfer_recv(std::int32_t t) const noexcept {
    return transfer_ends_[static_cast<std::size_t>(t)].second;
  }
  /// All-reduces, one per stage with live workers, ascending by stage.
  [[nodiscard]] std::int32_t collectives() const noexcept {
    return static_cast<std::int32_t>(collective_node_.size());
  }
  [[nodiscard]] std::int32_t collective_node(std::int32_t c) const noexcept {
    return collective_node_[static_cast<std::size_t>(c)];
  }
  /// The number of an all-reduce node; -1 for others.
  [[nodiscard]] std::int32_t collective_index(std::int32_t node) const noexcept {
    return kind(node) == NodeKind::kCollective ? transfer_index_[static_cast<std::size_t>(node)]
                                               : -1;
  }
  [[nodiscard]] std::int32_t collective_stage(std::int32_t c) const noexcept {
    return collective_stage_[static_cast<std::size_t>(c)];
  }

  /// Whether the node numbering is a topological order of the same-iteration edges; false when
  /// they form a cycle (the schedule deadlocks) or after reorder().
  [[nodiscard]] bool ordered() const noexcept { return stuck_.empty() && !reordered_; }

  /// For searches over worker orders, on the graph of a compute-only schedule: worker `worker`'s
  /// compute actions run in the order of `nodes` (each of its F/I/W/B nodes once), its REDUCE_GRAD
  /// and OPT still last. The graph rewrites the worker's stream edges and its arrival at the
  /// stage's all-reduce; the node numbering stops being a topological order.
  void reorder(std::int32_t worker, std::span<const std::int32_t> nodes);
  /// Writes a topological order of the same-iteration edges as they are now into `order`, or
  /// returns false when they form a cycle. A depth-first walk over each node's predecessors, taking
  /// the nodes in the order of `hint` (any nodes, typically the order of the walk before a
  /// reorder(), which stays nearly valid), then the rest by number: where the hint is already a
  /// topological order, each edge is read once and nothing is pushed twice. Any topological order
  /// times the graph alike.
  [[nodiscard]] bool topological_order(std::vector<std::int32_t>& order,
                                       std::span<const std::int32_t> hint = {}) const;
  /// Whether `node` can ever run in the first iteration: false for the nodes of a dependency cycle
  /// and for every node that waits on one (all true when ordered()).
  [[nodiscard]] bool runs(std::int32_t node) const noexcept {
    return stuck_.empty() || !stuck_[static_cast<std::size_t>(node)];
  }
  /// The nodes later iterations depend on (sources of distance-1 edges), ascending: the state an
  /// iteration hands to the next.
  [[nodiscard]] const std::vector<std::int32_t>& carried() const noexcept { return carried_; }
  /// Per worker, the node of its last list position (its OPT): when the worker's iteration ends.
  [[nodiscard]] std::vector<std::int32_t> last_nodes() const;

  /// Times one iteration, nodes in increasing number (a topological order): start[n] = max over
  /// edges of (end of `from`, in `previous_end` for distance 1 or nothing when there is no
  /// previous iteration) + delay, end[n] = start[n] + duration (with no previous iteration, 0 for
  /// the actions of lists that run across iterations that belong to the iteration before).
  /// `cause[n]`, when given, is the edge index that set the start (the first such), -1 when none
  /// did. Needs ordered(). Ends stop at kMaxClock (core/units.hpp); a sweep that reaches it throws
  /// InputError naming the source: the schedule's times are too long to represent.
  void sweep(std::span<const Nanos> previous_end, std::span<Nanos> start, std::span<Nanos> end,
             std::span<std::int32_t> cause = {}) const;
  /// The same, walking the nodes in `order` (a topological_order()).
  void sweep(std::span<const std::int32_t> order, std::span<const Nanos> previous_end,
             std::span<Nanos> start, std::span<Nanos> end,
             std::span<std::int32_t> cause = {}) const;

 private:
  static constexpr std::uint32_t kFromMask = 0x7fff'ffffU;

  template <typename Durations>
  void build(const Schedule& schedule, const ActionIndex& index, const Durations& durations,
             const GraphOptions& options, const std::string& source);
  /// Throws InputError naming the source when a sweep reached kMaxClock (core/units.hpp): every
  /// node is an ancestor of some worker's last node, so checking those finds it.
  void check_clock(std::span<const Nanos> end) const;
  /// The durations a sweep uses: the first iteration's when there is no previous one.
  [[nodiscard]] const Nanos* durations(const Nanos* previous) const noexcept {
    return previous == nullptr && !first_duration_.empty() ? first_duration_.data()
                                                           : duration_.data();
  }

  const Schedule* schedule_ = nullptr;
  std::string source_;
  std::vector<NodeKind> kind_;
  std::vector<Nanos> duration_;
  /// The first iteration's durations when lists run across iterations (Action::lag): a lagged
  /// node belongs to an iteration before the first and takes no time there; empty otherwise.
  std::vector<Nanos> first_duration_;
  std::vector<std::int32_t> first_edge_;  // CSR over nodes, size nodes + 1
  std::vector<std::uint32_t> pred_;       // from | distance << 31
  std::vector<Nanos> delay_;              // parallel to pred_; empty when every delay is 0
  std::vector<std::int32_t> list_begin_;  // per worker, into list_node_; size workers + 1
  std::vector<std::int32_t> list_node_;
  std::vector<std::vector<Action>> implied_;  // per worker: implied REDUCE_GRAD/OPT
  std::vector<Position> position_;            // per node
  std::vector<std::int32_t> transfer_index_;  // per node: transfer or all-reduce number, or -1
  std::vector<std::int32_t> transfer_node_;
  std::vector<std::pair<std::int32_t, std::int32_t>> transfer_ends_;  // SEND, RECV node
  std::vector<std::int32_t> collective_node_;
  std::vector<std::int32_t> collective_stage_;
  std::vector<char> stuck_;  // empty when ordered; else the nodes the numbering never reached
  std::vector<std::int32_t> carried_;
  bool reordered_ = false;
};

}  // namespace recycle::planner
