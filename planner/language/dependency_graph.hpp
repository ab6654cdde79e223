// Indexes over a schedule's actions, and its dependency graph for cycle reports.
//
// Concepts:
//  - ActionIndex: where each (kind, owner, virtual stage, micro-batch) occurs first, and how often.
//    Dependencies always point at first occurrences; the validator reports the others. Nodes are
//    numbered worker by worker in Schedule::workers order (action i of worker w is node
//    offset(w) + i), as planner/language/execution_graph.hpp numbers its action nodes.
//  - DependencyGraph: the same-iteration edges of an ExecutionGraph
//  (planner/language/execution_graph.hpp)
//    as a Boost.Graph, for the validator: a cycle is a deadlock, reported along its edges.
#pragma once

#include <array>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/range/iterator_range.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "planner/language/execution_graph.hpp"
#include "planner/language/schedule.hpp"
#include "planner/language/semantics.hpp"

namespace recycle::planner {

/// Action `index` of `Schedule::workers[worker]`.
struct ActionRef {
  std::int32_t worker = -1;
  std::int32_t index = -1;
};

class ActionIndex {
 public:
  explicit ActionIndex(const Schedule& schedule);

  /// Whether `action` on worker `id` is indexed: a chunk action whose owner, micro-batch and
  /// virtual stage are in the layout's range and whose virtual stage is on the worker's stage.
  [[nodiscard]] static bool fits(const Layout& layout, WorkerId id, const Action& action) noexcept {
    if (!chunk_action(action.type)) return false;
    if (layout.dp < 1 || layout.pp < 1 || layout.microbatches < 1 || layout.interleave < 1) {
      return false;
    }
    const std::int64_t virtual_stages = std::int64_t{layout.pp} * layout.interleave;
    return action.owner >= 0 && action.owner < layout.dp && action.microbatch >= 0 &&
           action.microbatch < layout.microbatches && action.virtual_stage >= 0 &&
           action.virtual_stage < virtual_stages &&
           layout.stage_of(action.virtual_stage) == id.stage;
  }

  /// fits() for the layout of this index, with its placement looked up.
  [[nodiscard]] bool indexes(WorkerId id, const Action& action) const noexcept {
    const auto below = [](std::int32_t x, std::int64_t bound) { return x >= 0 && x < bound; };
    return chunk_action(action.type) && below(action.virtual_stage, virtual_stages_) &&
           below(action.owner, layout_.dp) && below(action.microbatch, layout_.microbatches) &&
           stage_of_[static_cast<std::size_t>(action.virtual_stage)] == id.stage;
  }

  [[nodiscard]] std::int32_t actions() const noexcept { return offsets_.back(); }
  [[nodiscard]] std::int32_t node(std::int32_t worker, std::int32_t index) const noexcept {
    return offsets_[static_cast<std::size_t>(worker)] + index;
  }
  /// The worker and index of action node `node` (< actions()).
  [[nodiscard]] ActionRef ref(std::int32_t node) const noexcept;

  /// The node of the first `kind` of (owner, virtual stage, micro-batch), or -1 if there is none
  /// (arguments out of range included).
  [[nodiscard]] std::int32_t first(ChunkAction kind, std::int32_t owner, std::int32_t virtual_stage,
                                   std::int32_t microbatch) const noexcept {
    const std::size_t s = slot(owner, virtual_stage, microbatch);
    return s == kNoSlot ? -1 : first_[s * kChunkActionCount + static_cast<std::size_t>(kind)];
  }
  /// How many indexed actions are that `kind` of (owner, virtual stage, micro-batch).
  [[nodiscard]] std::int32_t count(ChunkAction kind, std::int32_t owner, std::int32_t virtual_stage,
                                   std::int32_t microbatch) const noexcept;
  /// The first I of the chunk if there is one, else its first B, else -1.
  [[nodiscard]] std::int32_t first_backward(std::int32_t owner, std::int32_t virtual_stage,
                                            std::int32_t microbatch) const noexcept {
    const std::size_t s = slot(owner, virtual_stage, microbatch);
    if (s == kNoSlot) return -1;
    const std::int32_t i =
        first_[s * kChunkActionCount + static_cast<std::size_t>(ChunkAction::kI)];
    return i >= 0 ? i : first_[s * kChunkActionCount + static_cast<std::size_t>(ChunkAction::kB)];
  }

 private:
  using Key = std::array<std::int32_t, 3>;  // owner, virtual stage, micro-batch

  static constexpr std::size_t kNoSlot = ~std::size_t{0};

  /// The slot of (owner, virtual stage, micro-batch), or kNoSlot.
  [[nodiscard]] std::size_t slot(std::int32_t owner, std::int32_t virtual_stage,
                                 std::int32_t microbatch) const noexcept {
    if (owner < 0 || owner >= layout_.dp || virtual_stage < 0 || virtual_stage >= virtual_stages_ ||
        microbatch < 0 || microbatch >= layout_.microbatches) {
      return kNoSlot;
    }
    return dense_ ? dense_slot(owner, virtual_stage, microbatch)
                  : sparse_slot(owner, virtual_stage, microbatch);
  }
  /// The slot of a chunk in range, when slots are dense.
  [[nodiscard]] std::size_t dense_slot(std::int32_t owner, std::int32_t virtual_stage,
                                       std::int32_t microbatch) const noexcept {
    return (static_cast<std::size_t>(owner) * static_cast<std::size_t>(virtual_stages_) +
            static_cast<std::size_t>(virtual_stage)) *
               static_cast<std::size_t>(layout_.microbatches) +
           static_cast<std::size_t>(microbatch);
  }
  [[nodiscard]] std::size_t sparse_slot(std::int32_t owner, std::int32_t virtual_stage,
                                        std::int32_t microbatch) const noexcept;

  Layout layout_;
  std::int64_t virtual_stages_ = 0;     // 0 when the layout has an empty dimension
  std::vector<std::int32_t> stage_of_;  // per virtual stage: Layout::stage_of
  std::vector<std::int32_t> offsets_;   // first node of each worker, then the total
  // Slots are dense over the layout's chunks when the schedule comes near to covering them, else
  // the sorted distinct chunks present (a file may declare a huge layout and hold few actions).
  bool dense_ = true;
  std::vector<Key> keys_;
  std::vector<std::int32_t> first_;  // [slot * kChunkActionCount + kind]
  std::vector<std::int32_t> count_;
};

class DependencyGraph {
 public:
  using Graph =
      boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, boost::no_property,
                                         boost::no_property, std::uint32_t, std::uint32_t>;

  /// The same-iteration edges of `graph`; node numbers are the graph's.
  explicit DependencyGraph(const ExecutionGraph& graph);

  [[nodiscard]] const Graph& graph() const noexcept { return graph_; }
  [[nodiscard]] std::int32_t nodes() const noexcept { return nodes_; }

  /// One cycle per strongly connected component of more than one node, ordered by the
  /// component's smallest node. Each cycle starts at that node n0 and lists n0 -> n1 -> ... -> nk
  /// along edges (nk -> n0 closes it); it is a shortest cycle through n0.
  [[nodiscard]] std::vector<std::vector<std::int32_t>> cycles() const;

 private:
  std::int32_t nodes_ = 0;
  Graph graph_;
};

}  // namespace recycle::planner
