#include "sim/pipeline_fold.hpp"

#include <algorithm>
#include <unordered_map>

#include "core/error.hpp"

namespace recycle::sim {

namespace {

using planner::Action;
using planner::Schedule;
using planner::WorkerId;

/// The schedule's description without its workers.
Schedule without_workers(const Schedule& schedule) {
  Schedule out;
  out.generator = schedule.generator;
  out.layout = schedule.layout;
  out.staggered_optimizer = schedule.staggered_optimizer;
  out.weight_versions = schedule.weight_versions;
  out.failed = schedule.failed;
  out.routes = schedule.routes;
  return out;
}

bool same_step(const Action& a, const Action& b) {
  return a.type == b.type && a.virtual_stage == b.virtual_stage && a.microbatch == b.microbatch &&
         a.lag == b.lag;
}

}  // namespace

std::optional<PipelineFold> fold_pipelines(const Schedule& schedule,
                                           const planner::CostModel& model) {
  const planner::Layout& layout = schedule.layout;
  const std::vector<planner::WorkerSchedule>& workers = schedule.workers;
  if (layout.dp < 2) return std::nullopt;
  for (std::size_t i = 1; i < workers.size(); ++i) {
    if (!(workers[i - 1].id < workers[i].id)) return std::nullopt;
  }
  const auto pp = static_cast<std::size_t>(layout.pp);
  const auto dp = static_cast<std::size_t>(layout.dp);
  // Pipelines that may fold: every stage listed (stage s at first + s), in no route, running only
  // their own micro-batches.
  std::vector<std::int32_t> first(dp, -1);
  for (std::size_t i = 0; i < workers.size();) {
    const std::int32_t d = workers[i].id.dp;
    std::size_t j = i;
    while (j < workers.size() && workers[j].id.dp == d) ++j;
    bool whole = j - i == pp && d >= 0 && d < layout.dp;
    for (std::size_t s = 0; whole && s < pp; ++s)
      whole = workers[i + s].id.stage == static_cast<std::int32_t>(s);
    if (whole) first[static_cast<std::size_t>(d)] = static_cast<std::int32_t>(i);
    i = j;
  }
  for (const planner::Route& r : schedule.routes) {
    for (const std::int32_t d : {r.owner, r.dp}) {
      if (d >= 0 && d < layout.dp) first[static_cast<std::size_t>(d)] = -1;
    }
  }
  const auto list = [&](std::size_t d, std::size_t s) -> const std::vector<Action>& {
    return workers[static_cast<std::size_t>(first[d]) + s].actions;
  };
  // Where a pipeline starts within its node: pipelines that start at the same offset have the same
  // workers on the same nodes (planner/timing/cluster.hpp places rank dp x pp + stage), so the same
  // transfers stay inside a node.
  const planner::Cluster& cluster = model.cluster;
  const auto offset = [&](std::size_t d) -> std::int64_t {
    if (cluster.pipelines_interchangeable()) return 0;
    return static_cast<std::int64_t>(d) * layout.pp * cluster.tensor_parallel() %
           cluster.gpus_per_node();
  };
  std::vector<std::uint64_t> hash(dp, 0);
  for (std::size_t d = 0; d < dp; ++d) {
    if (first[d] < 0) continue;
    std::uint64_t h = 14695981039346656037ULL;  // FNV-1a over the offset and the steps
    const auto mix = [&h](std::int64_t v) {
      h ^= static_cast<std::uint64_t>(v);
      h *= 1099511628211ULL;
    };
    mix(offset(d));
    bool own = true;
    for (std::size_t s = 0; s < pp && own; ++s) {
      mix(static_cast<std::int64_t>(list(d, s).size()));
      for (const Action& a : list(d, s)) {
        own = own && a.owner == static_cast<std::int32_t>(d);
        mix(static_cast<std::int64_t>(a.type));
        mix(a.virtual_stage);
        mix(a.microbatch);
      }
    }
    if (!own) first[d] = -1;
    hash[d] = h;
  }
  // Each pipeline's source: the first pipeline with the same lists.
  std::vector<std::int32_t> source(dp);
  std::unordered_map<std::uint64_t, std::vector<std::int32_t>> classes;
  std::int32_t folded = 0;
  for (std::size_t d = 0; d < dp; ++d) {
    source[d] = static_cast<std::int32_t>(d);
    if (first[d] < 0) continue;
    std::vector<std::int32_t>& firsts = classes[hash[d]];
    for (const std::int32_t c : firsts) {
      const auto e = static_cast<std::size_t>(c);
      bool same = offset(d) == offset(e);
      for (std::size_t s = 0; s < pp && same; ++s) {
        same = std::equal(list(d, s).begin(), list(d, s).end(), list(e, s).begin(),
                          list(e, s).end(), same_step);
      }
      if (same) {
        source[d] = c;
        break;
      }
    }
    if (source[d] == static_cast<std::int32_t>(d)) {
      firsts.push_back(static_cast<std::int32_t>(d));
    } else {
      ++folded;
    }
  }
  if (folded == 0) return std::nullopt;

  PipelineFold fold;
  fold.schedule = without_workers(schedule);
  fold.folded_pipelines = folded;
  fold.source.resize(workers.size());
  std::vector<std::int32_t> kept(workers.size(), -1);  // index in fold.schedule
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const WorkerId id = workers[i].id;
    const bool simulated =
        id.dp < 0 || id.dp >= layout.dp || source[static_cast<std::size_t>(id.dp)] == id.dp;
    if (simulated) {
      kept[i] = static_cast<std::int32_t>(fold.schedule.workers.size());
      fold.schedule.workers.push_back(workers[i]);
      fold.source[i] = kept[i];
    } else {
      const auto rep = static_cast<std::size_t>(source[static_cast<std::size_t>(id.dp)]);
      fold.source[i] =
          kept[static_cast<std::size_t>(first[rep]) + static_cast<std::size_t>(id.stage)];
    }
  }
  return fold;
}

Schedule unfold_schedule(const Schedule& whole, const PipelineFold& fold, const Schedule& ran) {
  Schedule out = without_workers(whole);
  out.workers.reserve(whole.workers.size());
  for (std::size_t i = 0; i < whole.workers.size(); ++i) {
    const WorkerId id = whole.workers[i].id;
    const planner::WorkerSchedule& from = ran.workers[static_cast<std::size_t>(fold.source[i])];
    out.workers.push_back({id, from.actions});
    if (from.id.dp != id.dp) {
      for (Action& a : out.workers.back().actions) a.owner = id.dp;  // the pipeline runs its own
    }
  }
  return out;
}

FoldMap::FoldMap(const PipelineFold& fold, const Schedule& whole,
                 std::span<const std::int32_t> list_sizes, std::span<const std::int32_t> sends)
    : pp_(static_cast<std::size_t>(whole.layout.pp)) {
  const std::size_t workers = whole.workers.size();
  const std::size_t ran = fold.schedule.workers.size();
  RECYCLE_ASSERT(list_sizes.size() == ran && sends.size() == ran, "one size per simulated worker");
  at_.assign(static_cast<std::size_t>(whole.layout.workers()), -1);
  for (std::size_t i = 0; i < workers; ++i) {
    const WorkerId id = whole.workers[i].id;
    at_[planner::worker_index(id, pp_)] = static_cast<std::int32_t>(i);
  }
  ran_first_send_.assign(ran + 1, 0);
  whole_of_.resize(ran);
  dp_.resize(ran);
  stage_.resize(ran);
  for (std::size_t r = 0; r < ran; ++r) {
    const WorkerId id = fold.schedule.workers[r].id;
    ran_first_send_[r + 1] = ran_first_send_[r] + sends[r];
    whole_of_[r] = at_[planner::worker_index(id, pp_)];
    dp_[r] = id.dp;
    stage_[r] = id.stage;
  }
  list_size_.resize(workers);
  first_send_.assign(workers + 1, 0);
  own_dp_.resize(workers);
  source_dp_.resize(workers);
  first_copy_.assign(ran + 1, 0);
  for (std::size_t i = 0; i < workers; ++i) {
    const auto r = static_cast<std::size_t>(fold.source[i]);
    list_size_[i] = list_sizes[r];
    first_send_[i + 1] = first_send_[i] + sends[r];
    own_dp_[i] = whole.workers[i].id.dp;
    source_dp_[i] = dp_[r];
    ++first_copy_[r + 1];
    if (whole_of_[r] != static_cast<std::int32_t>(i))
      folded_nodes_ += static_cast<std::uint64_t>(list_sizes[r] + sends[r]);
  }
  for (std::size_t r = 0; r < ran; ++r) first_copy_[r + 1] += first_copy_[r];
  copies_.resize(workers);
  std::vector<std::int32_t> next(first_copy_.begin(), first_copy_.end() - 1);
  for (std::size_t i = 0; i < workers; ++i) {
    copies_[static_cast<std::size_t>(next[static_cast<std::size_t>(fold.source[i])]++)] =
        static_cast<std::int32_t>(i);
  }
}

}  // namespace recycle::sim
