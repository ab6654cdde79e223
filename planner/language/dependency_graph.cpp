#include "planner/language/dependency_graph.hpp"

#include <algorithm>
#include <boost/graph/strong_components.hpp>
#include <deque>
#include <limits>
#include <utility>

#include "core/error.hpp"

namespace recycle::planner {

namespace {

/// a * b, or `cap` if the product exceeds it (factors are >= 0).
std::int64_t capped_product(std::int64_t a, std::int64_t b, std::int64_t cap) {
  if (a != 0 && b > cap / a) return cap;
  return std::min(a * b, cap);
}

std::size_t kind_index(ChunkAction kind) {
  return static_cast<std::size_t>(kind);
}

}  // namespace

ActionIndex::ActionIndex(const Schedule& schedule) : layout_(schedule.layout) {
  const bool usable =
      layout_.dp >= 1 && layout_.pp >= 1 && layout_.microbatches >= 1 && layout_.interleave >= 1;
  virtual_stages_ = usable ? std::int64_t{layout_.pp} * layout_.interleave : 0;
  stage_of_.resize(static_cast<std::size_t>(virtual_stages_));
  for (std::size_t v = 0; v < stage_of_.size(); ++v)
    stage_of_[v] = layout_.stage_of(static_cast<std::int32_t>(v));

  offsets_.reserve(schedule.workers.size() + 1);
  std::int64_t total = 0;
  for (const WorkerSchedule& worker : schedule.workers) {
    offsets_.push_back(static_cast<std::int32_t>(total));
    total += static_cast<std::int64_t>(worker.actions.size());
    RECYCLE_ASSERT(total < std::numeric_limits<std::int32_t>::max() / 2,
                   "schedule too large for 32-bit node numbers");
  }
  offsets_.push_back(static_cast<std::int32_t>(total));

  // Dense while the layout's chunk count stays within a small multiple of the actions.
  const std::int64_t dense_limit = 2 * total + 4096;
  const std::int64_t chunks =
      usable ? capped_product(capped_product(layout_.dp, virtual_stages_, dense_limit + 1),
                              layout_.microbatches, dense_limit + 1)
             : 0;
  dense_ = chunks <= dense_limit;
  std::size_t slots = static_cast<std::size_t>(chunks);
  if (!dense_) {
    for (const WorkerSchedule& worker : schedule.workers) {
      for (const Action& a : worker.actions) {
        if (indexes(worker.id, a)) keys_.push_back({a.owner, a.virtual_stage, a.microbatch});
      }
    }
    std::sort(keys_.begin(), keys_.end());
    keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
    slots = keys_.size();
  }
  first_.assign(slots * kChunkActionCount, -1);
  count_.assign(slots * kChunkActionCount, 0);
  for (std::size_t w = 0; w < schedule.workers.size(); ++w) {
    const WorkerSchedule& worker = schedule.workers[w];
    for (std::size_t i = 0; i < worker.actions.size(); ++i) {
      const Action& a = worker.actions[i];
      if (!indexes(worker.id, a)) continue;  // in range: no slot() checks needed
      const std::size_t at = (dense_ ? dense_slot(a.owner, a.virtual_stage, a.microbatch)
                                     : sparse_slot(a.owner, a.virtual_stage, a.microbatch)) *
                                 kChunkActionCount +
                             kind_index(*chunk_action(a.type));
      if (first_[at] < 0) first_[at] = offsets_[w] + static_cast<std::int32_t>(i);
      ++count_[at];
    }
  }
}

ActionRef ActionIndex::ref(std::int32_t node) const noexcept {
  // The last worker whose first node is <= node (workers with no actions share an offset).
  const auto it = std::upper_bound(offsets_.begin(), offsets_.end() - 1, node);
  const auto worker = static_cast<std::int32_t>(it - offsets_.begin()) - 1;
  return {worker, node - offsets_[static_cast<std::size_t>(worker)]};
}

std::size_t ActionIndex::sparse_slot(std::int32_t owner, std::int32_t virtual_stage,
                                     std::int32_t microbatch) const noexcept {
  const Key key{owner, virtual_stage, microbatch};
  const auto it = std::lower_bound(keys_.begin(), keys_.end(), key);
  if (it == keys_.end() || *it != key) return kNoSlot;
  return static_cast<std::size_t>(it - keys_.begin());
}

std::int32_t ActionIndex::count(ChunkAction kind, std::int32_t owner, std::int32_t virtual_stage,
                                std::int32_t microbatch) const noexcept {
  const std::size_t s = slot(owner, virtual_stage, microbatch);
  return s == kNoSlot ? 0 : count_[s * kChunkActionCount + kind_index(kind)];
}

DependencyGraph::DependencyGraph(const ExecutionGraph& graph) : nodes_(graph.nodes()) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  edges.reserve(static_cast<std::size_t>(graph.edges()));
  for (std::int32_t node = 0; node < nodes_; ++node) {
    for (std::int32_t k = graph.first_edge(node); k < graph.first_edge(node + 1); ++k) {
      const ExecutionGraph::Edge e = graph.edge(k);
      if (e.distance == 0 && e.from != node) {
        edges.emplace_back(static_cast<std::uint32_t>(e.from), static_cast<std::uint32_t>(node));
      }
    }
  }
  graph_ = Graph(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(),
                 static_cast<std::uint32_t>(nodes_));
}

std::vector<std::vector<std::int32_t>> DependencyGraph::cycles() const {
  const auto n = static_cast<std::size_t>(nodes());
  std::vector<std::uint32_t> component(n);
  const auto components = boost::strong_components(
      graph_, boost::make_iterator_property_map(component.begin(),
                                                boost::get(boost::vertex_index, graph_)));
  std::vector<std::int32_t> size(static_cast<std::size_t>(components), 0);
  std::vector<std::int32_t> smallest(static_cast<std::size_t>(components), -1);
  for (std::size_t v = 0; v < n; ++v) {
    const std::size_t c = component[v];
    if (size[c]++ == 0) smallest[c] = static_cast<std::int32_t>(v);
  }
  std::vector<std::int32_t> starts;
  for (std::size_t c = 0; c < size.size(); ++c) {
    if (size[c] > 1) starts.push_back(smallest[c]);
  }
  std::sort(starts.begin(), starts.end());

  // Breadth-first search inside the component from its smallest node until an edge leads back.
  std::vector<std::int32_t> parent(n, -1);
  std::vector<std::vector<std::int32_t>> result;
  for (const std::int32_t start : starts) {
    const std::uint32_t c = component[static_cast<std::size_t>(start)];
    std::vector<std::int32_t> visited{start};
    std::deque<std::int32_t> queue{start};
    std::int32_t closing = -1;
    while (!queue.empty() && closing < 0) {
      const std::int32_t from = queue.front();
      queue.pop_front();
      for (const auto to : boost::make_iterator_range(
               boost::adjacent_vertices(static_cast<std::uint32_t>(from), graph_))) {
        const auto t = static_cast<std::int32_t>(to);
        if (component[to] != c) continue;
        if (t == start) {
          closing = from;
          break;
        }
        if (parent[to] >= 0) continue;
        parent[to] = from;
        visited.push_back(t);
        queue.push_back(t);
      }
    }
    RECYCLE_ASSERT(closing >= 0, "a strongly connected component without a cycle");
    std::vector<std::int32_t> cycle;
    for (std::int32_t v = closing; v != start; v = parent[static_cast<std::size_t>(v)]) {
      cycle.push_back(v);
    }
    cycle.push_back(start);
    std::reverse(cycle.begin(), cycle.end());
    result.push_back(std::move(cycle));
    for (const std::int32_t v : visited) parent[static_cast<std::size_t>(v)] = -1;
  }
  return result;
}

}  // namespace recycle::planner
