// What a simulation run leaves behind: when every action, transfer and all-reduce started and
// ended, and for each the one thing that made it start when it did (its cause), from which the
// critical path is read. Stored flat and compact (two int64 times and a cause per action, per
// iteration), so 2,048 workers x ~600 actions x several iterations fit in a few hundred MB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/units.hpp"
#include "planner/timing/period.hpp"

namespace recycle::sim {

enum class NodeKind : std::uint8_t { kNone, kAction, kTransfer, kCollective };

/// An action record, a transfer or a collective (an index into the matching Timeline vector).
struct NodeRef {
  std::int32_t index = -1;
  NodeKind kind = NodeKind::kNone;

  friend bool operator==(const NodeRef&, const NodeRef&) = default;
};

/// One action of one worker in one iteration.
struct ActionRecord {
  Nanos start = 0;
  Nanos end = 0;
  NodeRef cause;  ///< what ended last among the things it waited for; none for the very first

  friend bool operator==(const ActionRecord&, const ActionRecord&) = default;
};

/// A SEND's bytes moving from the sender's send queue to the receiver's receive queue; it holds
/// both queues from start to end.
struct TransferRecord {
  Nanos start = 0;
  Nanos end = 0;                 ///< arrival
  std::int32_t from = 0;         ///< worker index (into Schedule::workers)
  std::int32_t to = 0;           ///< worker index
  std::int32_t send_action = 0;  ///< record index of the SEND that posted it
  std::int32_t iteration = 0;
  NodeRef cause;  ///< the SEND or RECV posted last, or the transfer that held a queue longer

  friend bool operator==(const TransferRecord&, const TransferRecord&) = default;
};

/// One ring all-reduce of a stage's gradients over its live DP peers.
struct CollectiveRecord {
  Nanos start = 0;  ///< when the last peer reached its REDUCE_GRAD
  Nanos end = 0;
  std::int32_t stage = 0;
  std::int32_t iteration = 0;
  NodeRef cause;  ///< the action after which the last peer reached REDUCE_GRAD

  friend bool operator==(const CollectiveRecord&, const CollectiveRecord&) = default;
};

struct Timeline {
  std::int32_t iterations = 0;
  /// Worker w's records are actions[first_record[w] .. first_record[w + 1]): iteration-major,
  /// each iteration the worker's whole action list in order. Size: workers + 1.
  std::vector<std::size_t> first_record;
  std::vector<ActionRecord> actions;
  std::vector<TransferRecord> transfers;      ///< in the order they were posted
  std::vector<CollectiveRecord> collectives;  ///< in the order they started
  std::vector<Nanos> iteration_ends;          ///< per iteration: the latest end of its last actions
  /// The steady state of the walk (planner::PeriodFinder, the period `recycle plan` predicts):
  /// read over the recorded iterations and, when they have not repeated yet, over more iterations
  /// walked without records, up to planner::kMaxSteadyStateIterations.
  planner::SteadyState steady;
  std::uint64_t events = 0;  ///< events the engine processed

  [[nodiscard]] std::size_t workers() const noexcept {
    return first_record.empty() ? 0 : first_record.size() - 1;
  }
  /// Actions in one iteration of worker w's list.
  [[nodiscard]] std::size_t list_size(std::size_t w) const noexcept {
    return (first_record[w + 1] - first_record[w]) / static_cast<std::size_t>(iterations);
  }
  [[nodiscard]] std::size_t index(std::size_t w, std::int32_t iteration,
                                  std::size_t action) const noexcept {
    const std::size_t first = first_record[w] + action;  // iteration 0 needs no division
    return iteration == 0 ? first : first + static_cast<std::size_t>(iteration) * list_size(w);
  }
  [[nodiscard]] const ActionRecord& at(std::size_t w, std::int32_t iteration,
                                       std::size_t action) const noexcept {
    return actions[index(w, iteration, action)];
  }

  struct Position {
    std::size_t worker = 0;
    std::int32_t iteration = 0;
    std::size_t action = 0;  ///< index in the worker's list
  };
  /// Which worker, iteration and list position a record index is.
  [[nodiscard]] Position locate(std::size_t record) const noexcept;
};

/// Throws InputError naming --iterations when a timeline of `actions` action records and
/// `transfers` transfer records would not fit the 32-bit indexes its causes use.
void check_record_count(std::size_t actions, std::size_t transfers);

}  // namespace recycle::sim
