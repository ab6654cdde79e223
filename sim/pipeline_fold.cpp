#include "sim/pipeline_fold.hpp"

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
  out.failed = schedule.failed;
  out.routes = schedule.routes;
  return out;
}

bool same_step(const Action& a, const Action& b) {
  return a.type == b.type && a.virtual_stage == b.virtual_stage && a.microbatch == b.microbatch;
}

}  // namespace

std::optional<PipelineFold> fold_pipelines(const Schedule& schedule,
                                           const planner::CostModel& model) {
  const planner::Layout& layout = schedule.layout;
  const std::vector<planner::WorkerSchedule>& workers = schedule.workers;
  if (layout.dp < 2 || !model.cluster.pipelines_interchangeable()) return std::nullopt;
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
  std::vector<std::uint64_t> hash(dp, 0);
  for (std::size_t d = 0; d < dp; ++d) {
    if (first[d] < 0) continue;
    std::uint64_t h = 14695981039346656037ULL;  // FNV-1a over the steps
    const auto mix = [&h](std::int64_t v) {
      h ^= static_cast<std::uint64_t>(v);
      h *= 1099511628211ULL;
    };
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
      bool same = true;
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

Timeline unfold_timeline(const Timeline& ran, const std::vector<char>& through_barrier,
                         const Schedule& whole, const PipelineFold& fold) {
  const planner::Layout& layout = whole.layout;
  const auto pp = static_cast<std::size_t>(layout.pp);
  const std::size_t ran_workers = ran.workers();
  const std::size_t workers = whole.workers.size();
  const std::size_t iterations = static_cast<std::size_t>(ran.iterations);
  std::vector<std::int32_t> at(static_cast<std::size_t>(layout.workers()), -1);  // (dp, stage)
  for (std::size_t i = 0; i < workers; ++i) {
    const WorkerId id = whole.workers[i].id;
    at[static_cast<std::size_t>(id.dp) * pp + static_cast<std::size_t>(id.stage)] =
        static_cast<std::int32_t>(i);
  }
  const auto whole_index = [&](WorkerId id) {
    return static_cast<std::size_t>(
        at[static_cast<std::size_t>(id.dp) * pp + static_cast<std::size_t>(id.stage)]);
  };
  // The transfers of each simulated worker are numbered together, in its list order.
  const std::size_t ran_transfers = ran.transfers.size() / iterations;
  std::vector<std::size_t> first_send(ran_workers + 1, 0);
  for (std::size_t t = 0; t < ran_transfers; ++t) {
    const auto from = static_cast<std::size_t>(ran.transfers[t].from);
    RECYCLE_ASSERT(t == 0 || ran.transfers[t - 1].from <= ran.transfers[t].from,
                   "transfers numbered worker by worker");
    ++first_send[from + 1];
  }
  for (std::size_t r = 0; r < ran_workers; ++r) first_send[r + 1] += first_send[r];
  const auto sends = [&](std::size_t r) { return first_send[r + 1] - first_send[r]; };
  const auto block = [&](std::size_t r) { return ran.first_record[r + 1] - ran.first_record[r]; };

  Timeline out;
  out.iterations = ran.iterations;
  out.first_record.assign(workers + 1, 0);
  std::vector<std::size_t> whole_first_send(workers + 1, 0);
  std::uint64_t added_nodes = 0;  // per iteration, of the folded workers
  for (std::size_t i = 0; i < workers; ++i) {
    const auto r = static_cast<std::size_t>(fold.source[i]);
    out.first_record[i + 1] = out.first_record[i] + block(r);
    whole_first_send[i + 1] = whole_first_send[i] + sends(r);
    if (whole.workers[i].id != fold.schedule.workers[r].id)
      added_nodes += block(r) / iterations + sends(r);
  }
  const std::size_t transfers = whole_first_send[workers];
  check_record_count(out.first_record[workers], transfers * iterations);

  // Where a cause of whole worker i's run lies: on the worker of i's own pipeline that stands
  // where the simulated one did, unless it is shared (the barrier's, an all-reduce's).
  const auto moved = [&](std::size_t r, std::size_t i, bool shared) {
    const WorkerId id = fold.schedule.workers[r].id;
    if (shared) return whole_index(id);
    const WorkerId source = fold.schedule.workers[static_cast<std::size_t>(fold.source[i])].id;
    if (id.dp != source.dp) return whole_index(id);
    return whole_index({whole.workers[i].id.dp, id.stage});
  };
  const auto remap = [&](NodeRef c, std::size_t i, bool shared) -> NodeRef {
    switch (c.kind) {
      case NodeKind::kAction: {
        const auto index = static_cast<std::size_t>(c.index);
        const std::size_t r = ran.locate(index).worker;
        const std::size_t w = moved(r, i, shared);
        return {static_cast<std::int32_t>(out.first_record[w] + (index - ran.first_record[r])),
                NodeKind::kAction};
      }
      case NodeKind::kTransfer: {
        const auto index = static_cast<std::size_t>(c.index);
        const std::size_t it = index / ran_transfers, t = index % ran_transfers;
        const auto r = static_cast<std::size_t>(ran.transfers[t].from);
        const std::size_t w = moved(r, i, shared);
        return {
            static_cast<std::int32_t>(it * transfers + whole_first_send[w] + (t - first_send[r])),
            NodeKind::kTransfer};
      }
      case NodeKind::kCollective:
      case NodeKind::kNone:
        return c;
    }
    return c;
  };

  // Both record vectors are written front to back, so they are filled without clearing first.
  out.actions.reserve(out.first_record[workers]);
  for (std::size_t i = 0; i < workers; ++i) {
    const auto r = static_cast<std::size_t>(fold.source[i]);
    const std::size_t from = ran.first_record[r], to = ran.first_record[r + 1];
    for (std::size_t j = from; j < to; ++j) {
      ActionRecord record = ran.actions[j];
      const auto c = static_cast<std::size_t>(record.cause.index);
      if (record.cause.kind == NodeKind::kAction && c >= from && c < to &&
          through_barrier[j] == 0) {
        // Most causes: the worker's own earlier action, which moves with it.
        record.cause.index = static_cast<std::int32_t>(out.first_record[i] + (c - from));
      } else {
        record.cause = remap(record.cause, i, through_barrier[j] != 0);
      }
      out.actions.push_back(record);
    }
  }
  out.transfers.reserve(transfers * iterations);
  for (std::size_t it = 0; it < iterations; ++it) {
    for (std::size_t i = 0; i < workers; ++i) {
      const auto r = static_cast<std::size_t>(fold.source[i]);
      for (std::size_t k = 0; k < sends(r); ++k) {
        TransferRecord record = ran.transfers[it * ran_transfers + first_send[r] + k];
        record.from = static_cast<std::int32_t>(i);
        record.to = static_cast<std::int32_t>(moved(static_cast<std::size_t>(record.to), i, false));
        record.send_action = static_cast<std::int32_t>(
            out.first_record[i] +
            (static_cast<std::size_t>(record.send_action) - ran.first_record[r]));
        record.cause = remap(record.cause, i, false);
        out.transfers.push_back(record);
      }
    }
  }
  out.collectives = ran.collectives;
  // The last peer to arrive, where it was simulated (the first of its class).
  for (CollectiveRecord& c : out.collectives) c.cause = remap(c.cause, 0, true);
  out.iteration_ends = ran.iteration_ends;
  out.events = ran.events + added_nodes * iterations;
  return out;
}

}  // namespace recycle::sim
