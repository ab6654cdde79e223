#include "planner/language/validator.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "core/error.hpp"
#include "planner/language/dependency_graph.hpp"
#include "planner/language/execution_graph.hpp"
#include "planner/language/semantics.hpp"
#include "planner/language/work_limits.hpp"

namespace recycle::planner {

namespace {

constexpr ChunkAction kF = ChunkAction::kF;
constexpr ChunkAction kI = ChunkAction::kI;
constexpr ChunkAction kW = ChunkAction::kW;
constexpr ChunkAction kB = ChunkAction::kB;

std::string num(std::int64_t n) {
  return std::to_string(n);
}

/// "3", "3-7", "0-2,5,9-11": micro-batch numbers in increasing order.
std::string ranges(const std::vector<std::int32_t>& sorted) {
  std::string out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += num(sorted[i]);
    if (j > i) out += "-" + num(sorted[j]);
    i = j + 1;
  }
  return out;
}

struct Inflight {
  std::int32_t peak = 0;         ///< most (virtual stage, micro-batch) chunks held at once
  std::int32_t first_over = -1;  ///< first action at which more than `limit` are held, or -1
};

/// Walks a worker's list: +1 chunk of activations at F, -1 at W or B.
Inflight inflight(const std::vector<Action>& actions, std::int64_t limit) {
  Inflight result;
  std::int32_t held = held_at_start(actions.data(), actions.data() + actions.size());
  result.peak = held;
  if (held > limit && !actions.empty()) result.first_over = 0;
  for (std::size_t i = 0; i < actions.size(); ++i) {
    const ActionType t = actions[i].type;
    if (t == ActionType::kForward) ++held;
    if (t == ActionType::kBackwardWeight || t == ActionType::kBackward) --held;
    result.peak = std::max(result.peak, held);
    if (held > limit && result.first_over < 0) result.first_over = static_cast<std::int32_t>(i);
  }
  return result;
}

/// Everything one validation run shares: the schedule, its indexes and the violations so far.
class Checker {
 public:
  Checker(const Schedule& schedule, std::vector<Violation>& out)
      : schedule_(schedule), layout_(schedule.layout), out_(out) {}

  [[nodiscard]] bool check_layout();
  void check_workers();
  void check_routes();
  void check_actions();
  void prepare();  ///< the route table and the action index; needs a layout in range
  void check_coverage();
  void check_placement();
  void check_order();
  void check_comms();
  void check_iteration();
  void check_deadlock();
  void check_memory(std::int32_t limit);

 private:
  [[nodiscard]] const WorkerSchedule& worker(std::int32_t w) const {
    return schedule_.workers[static_cast<std::size_t>(w)];
  }
  [[nodiscard]] const Action& action(std::int32_t w, std::int32_t i) const {
    return worker(w).actions[static_cast<std::size_t>(i)];
  }
  /// "worker (0,2) action 5 '2I3'".
  [[nodiscard]] std::string describe(std::int32_t w, std::int32_t i) const {
    return "worker " + to_string(worker(w).id) + " action " + num(i) + " '" +
           to_token(action(w, i), worker(w).id.dp) + "'";
  }
  [[nodiscard]] std::string describe(ActionRef ref) const {
    return describe(ref.worker, ref.index);
  }
  /// A violation at action i of worker w: the message starts with describe(w, i).
  void at(Rule rule, std::int32_t w, std::int32_t i, const std::string& what) {
    out_.push_back({rule, worker(w).id, i, describe(w, i) + ": " + what});
  }
  void on(Rule rule, std::optional<WorkerId> id, const std::string& message) {
    out_.push_back({rule, id, -1, message});
  }
  [[nodiscard]] bool reported(Rule rule) const {
    return std::any_of(out_.begin(), out_.end(),
                       [rule](const Violation& v) { return v.rule == rule; });
  }

  /// Calls f(w, i, action) for every action that ActionIndex indexes.
  template <typename F>
  void for_each_indexed(F&& f) const {
    for (std::size_t w = 0; w < schedule_.workers.size(); ++w) {
      const WorkerSchedule& ws = schedule_.workers[w];
      for (std::size_t i = 0; i < ws.actions.size(); ++i) {
        if (!ActionIndex::fits(layout_, ws.id, ws.actions[i])) continue;
        f(static_cast<std::int32_t>(w), static_cast<std::int32_t>(i), ws.actions[i]);
      }
    }
  }
  /// The first occurrence of `kind` of the chunk of `a` (at `virtual_stage`), or nullopt.
  [[nodiscard]] std::optional<ActionRef> find(ChunkAction kind, const Action& a,
                                              std::int32_t virtual_stage) const {
    const std::int32_t node = index_->first(kind, a.owner, virtual_stage, a.microbatch);
    if (node < 0) return std::nullopt;
    return index_->ref(node);
  }
  [[nodiscard]] std::optional<ActionRef> find_backward(const Action& a, std::int32_t v) const {
    const std::int32_t node = index_->first_backward(a.owner, v, a.microbatch);
    if (node < 0) return std::nullopt;
    return index_->ref(node);
  }
  /// Where the producer of `input` of `a`'s chunk ran (its first occurrence), if anywhere.
  [[nodiscard]] std::optional<ActionRef> produced(const DataInput& input, const Action& a) const {
    return input.producer == Producer::kForward ? find(kF, a, input.virtual_stage)
                                                : find_backward(a, input.virtual_stage);
  }
  [[nodiscard]] bool is_first(std::int32_t w, std::int32_t i, const Action& a) const {
    return index_->first(*chunk_action(a.type), a.owner, a.virtual_stage, a.microbatch) ==
           index_->node(w, i);
  }
  /// The worker that runs (or, when it is missing, should run) the `kind` of `a`'s chunk at
  /// `virtual_stage`: F where it ran, else where the route puts it; I/B where it ran, else with
  /// the F; W where it ran, else with the I.
  [[nodiscard]] WorkerId runs(ChunkAction kind, const Action& a, std::int32_t virtual_stage) const;
  [[nodiscard]] std::int32_t count(ChunkAction kind, const Action& a, std::int32_t v) const {
    return index_->count(kind, a.owner, v, a.microbatch);
  }
  [[nodiscard]] std::string token(ActionType type, const Action& a, std::int32_t virtual_stage,
                                  WorkerId on) const {
    return to_token(Action{type, virtual_stage, a.microbatch, a.owner}, on.dp);
  }

  const Schedule& schedule_;
  const Layout& layout_;
  std::vector<Violation>& out_;
  std::optional<ActionIndex> index_;
  std::optional<RouteTable> routes_;
  std::set<WorkerId> failed_;
  bool structural_ = false;  // errors that make the dependency graph meaningless
};

WorkerId Checker::runs(ChunkAction kind, const Action& a, std::int32_t v) const {
  std::optional<ActionRef> at;
  switch (kind) {
    case ChunkAction::kF:
      at = find(kF, a, v);
      break;
    case ChunkAction::kW:
      at = find(kI, a, v);
      break;
    default:
      at = find_backward(a, v);
      break;
  }
  if (at) return worker(at->worker).id;
  if (kind == ChunkAction::kW) return runs(kI, a, v);
  if (kind != ChunkAction::kF) return runs(kF, a, v);
  return routes_->worker_of(a.owner, v, a.microbatch);
}

bool Checker::check_layout() {
  const auto range = [&](const char* name, std::int32_t value, std::int32_t max) {
    if (value >= 1 && value <= max) return;
    on(Rule::kLayout, std::nullopt,
       std::string("the layout's ") + name + " " + num(value) + " is out of range, expected 1 to " +
           num(max));
  };
  range("dp", layout_.dp, kMaxDp);
  range("pp", layout_.pp, kMaxPp);
  range("microbatches", layout_.microbatches, kMaxMicrobatches);
  range("interleave", layout_.interleave, kMaxInterleave);
  if (reported(Rule::kLayout)) return false;
  if (const std::int64_t n = chunks(layout_); n > kMaxChunks) {
    on(Rule::kLayout, std::nullopt,
       "the layout's dp x pp x interleave x microbatches = " + num(n) +
           " (pipeline, virtual stage, micro-batch) chunks, more than one schedule may hold (" +
           num(kMaxChunks) + ")");
    return false;
  }
  return true;
}

void Checker::check_workers() {
  const auto in_range = [&](WorkerId id) {
    return id.dp >= 0 && id.dp < layout_.dp && id.stage >= 0 && id.stage < layout_.pp;
  };
  for (const WorkerId id : schedule_.failed) {
    if (!in_range(id)) {
      on(Rule::kWorker, id, "failed worker " + to_string(id) + " is outside the layout");
    } else if (!failed_.insert(id).second) {
      on(Rule::kWorker, id, "failed worker " + to_string(id) + " is listed twice");
    }
  }
  std::set<WorkerId> listed;
  for (const WorkerSchedule& ws : schedule_.workers) {
    const std::string name = "worker " + to_string(ws.id);
    if (!in_range(ws.id)) {
      on(Rule::kWorker, ws.id,
         name + " is outside the layout (dp " + num(layout_.dp) + ", pp " + num(layout_.pp) + ")");
    } else if (!listed.insert(ws.id).second) {
      on(Rule::kWorker, ws.id, name + " is listed twice");
    } else if (failed_.count(ws.id) > 0) {
      on(Rule::kWorker, ws.id, name + " is failed but has an action list");
    }
  }
  for (std::int32_t d = 0; d < layout_.dp; ++d) {
    for (std::int32_t s = 0; s < layout_.pp; ++s) {
      const WorkerId id{d, s};
      if (listed.count(id) == 0 && failed_.count(id) == 0) {
        on(Rule::kWorker, id, "worker " + to_string(id) + " is neither in the schedule nor failed");
      }
    }
  }
  structural_ = structural_ || reported(Rule::kWorker);
}

void Checker::check_routes() {
  std::set<std::array<std::int32_t, 3>> seen;
  for (std::size_t k = 0; k < schedule_.routes.size(); ++k) {
    const Route& r = schedule_.routes[k];
    const WorkerId to{r.dp, r.stage};
    const std::string name = "route " + num(static_cast<std::int64_t>(k)) + " (pipeline " +
                             num(r.owner) + "'s micro-batch " + num(r.microbatch) + " at stage " +
                             num(r.stage) + " on worker " + to_string(to) + ")";
    if (r.owner < 0 || r.owner >= layout_.dp || r.stage < 0 || r.stage >= layout_.pp ||
        r.microbatch < 0 || r.microbatch >= layout_.microbatches || r.dp < 0 ||
        r.dp >= layout_.dp) {
      on(Rule::kRoute, std::nullopt, name + ": out of range");
      continue;
    }
    if (!seen.insert({r.owner, r.stage, r.microbatch}).second) {
      on(Rule::kRoute, to, name + ": that micro-batch is already routed at that stage");
    }
    if (failed_.count(to) > 0)
      on(Rule::kRoute, to, name + ": worker " + to_string(to) + " is failed");
  }
  for (const WorkerId id : failed_) {
    std::vector<std::int32_t> unrouted;
    for (std::int32_t mb = 0; mb < layout_.microbatches; ++mb) {
      if (routes_->dp_of(id.dp, id.stage, mb) == id.dp) unrouted.push_back(mb);
    }
    if (unrouted.empty()) continue;
    on(Rule::kRoute, id,
       "worker " + to_string(id) + " is failed but pipeline " + num(id.dp) + "'s micro-batch" +
           (unrouted.size() > 1 ? "es " : " ") + ranges(unrouted) + " at stage " + num(id.stage) +
           " ha" + (unrouted.size() > 1 ? "ve" : "s") + " no route to a live peer");
  }
}

void Checker::check_actions() {
  const std::int32_t vstages = layout_.virtual_stages();
  for (std::size_t w = 0; w < schedule_.workers.size(); ++w) {
    const WorkerSchedule& ws = schedule_.workers[w];
    for (std::size_t i = 0; i < ws.actions.size(); ++i) {
      const Action& a = ws.actions[i];
      std::string what;
      if (is_per_iteration(a.type)) {
        if (a.virtual_stage != ws.id.stage) {
          what =
              std::string(type_name(a.type)) + " must carry the worker's stage " + num(ws.id.stage);
        }
      } else if (a.virtual_stage < 0 || a.virtual_stage >= vstages) {
        what = "virtual stage " + num(a.virtual_stage) + " is out of range, expected 0 to " +
               num(vstages - 1);
      } else if (layout_.stage_of(a.virtual_stage) != ws.id.stage) {
        what = "virtual stage " + num(a.virtual_stage) + " runs on stage " +
               num(layout_.stage_of(a.virtual_stage)) + ", not on this worker's stage " +
               num(ws.id.stage);
      } else if (a.microbatch < 0 || a.microbatch >= layout_.microbatches) {
        what = "micro-batch " + num(a.microbatch) + " is out of range, expected 0 to " +
               num(layout_.microbatches - 1);
      } else if (a.owner < 0 || a.owner >= layout_.dp) {
        what = "owner " + num(a.owner) + " is out of range, expected 0 to " + num(layout_.dp - 1);
      }
      if (!what.empty())
        at(Rule::kAction, static_cast<std::int32_t>(w), static_cast<std::int32_t>(i), what);
    }
  }
  structural_ = structural_ || reported(Rule::kAction);
}

void Checker::prepare() {
  routes_.emplace(schedule_);
  index_.emplace(schedule_);
}

void Checker::check_coverage() {
  // Duplicates, at each occurrence after the first. A B makes every I and W of its chunk a
  // duplicate (B is I then W).
  for_each_indexed([&](std::int32_t w, std::int32_t i, const Action& a) {
    const ChunkAction kind = *chunk_action(a.type);
    if (kind != kF && kind != kI && kind != kW && kind != kB) return;
    const std::string type(type_name(a.type));
    if (!is_first(w, i, a)) {
      at(Rule::kDuplicate, w, i,
         type + " done twice (first at " + describe(*find(kind, a, a.virtual_stage)) + ")");
    } else if ((kind == kI || kind == kW) && count(kB, a, a.virtual_stage) > 0) {
      at(Rule::kDuplicate, w, i,
         "backward done twice: " + describe(*find(kB, a, a.virtual_stage)) +
             " is a B, which already runs " + type);
    }
  });
  structural_ = structural_ || reported(Rule::kDuplicate);

  // Missing actions, one violation per (worker that should run them, pipeline, virtual stage,
  // what is missing), listing the micro-batches.
  enum Gap { kNoF, kNoBackward, kNoI, kNoW };
  static constexpr const char* kGapWhat[] = {"F", "backward (B, or I and W)", "I", "W"};
  static constexpr ActionType kGapType[] = {ActionType::kForward, ActionType::kBackward,
                                            ActionType::kBackwardInput,
                                            ActionType::kBackwardWeight};
  for (std::int32_t o = 0; o < layout_.dp; ++o) {
    for (std::int32_t v = 0; v < layout_.virtual_stages(); ++v) {
      std::map<std::pair<WorkerId, int>, std::vector<std::int32_t>> gaps;
      for (std::int32_t mb = 0; mb < layout_.microbatches; ++mb) {
        const Action a{ActionType::kForward, v, mb, o};
        if (count(kF, a, v) == 0) gaps[{runs(kF, a, v), kNoF}].push_back(mb);
        if (count(kB, a, v) > 0) continue;
        const bool has_i = count(kI, a, v) > 0;
        const bool has_w = count(kW, a, v) > 0;
        if (!has_i && !has_w) gaps[{runs(kI, a, v), kNoBackward}].push_back(mb);
        if (!has_i && has_w) gaps[{runs(kI, a, v), kNoI}].push_back(mb);
        if (has_i && !has_w) gaps[{runs(kW, a, v), kNoW}].push_back(mb);
      }
      for (const auto& [key, mbs] : gaps) {
        const auto& [id, gap] = key;
        const std::string first = to_token(Action{kGapType[gap], v, mbs.front(), o}, id.dp);
        const std::string more =
            mbs.size() > 1 ? " and " + num(static_cast<std::int64_t>(mbs.size()) - 1) + " more"
                           : "";
        on(Rule::kMissing, id,
           "worker " + to_string(id) + ": '" + first + "'" + more + " missing: pipeline " + num(o) +
               "'s micro-batch" + (mbs.size() > 1 ? "es " : " ") + ranges(mbs) + " never run" +
               (mbs.size() > 1 ? "" : "s") + " " + kGapWhat[gap] + " at virtual stage " + num(v));
      }
    }
  }
}

void Checker::check_placement() {
  const std::int32_t last = layout_.virtual_stages() - 1;
  for_each_indexed([&](std::int32_t w, std::int32_t i, const Action& a) {
    if (!is_compute(a.type) || !is_first(w, i, a)) return;
    const WorkerId self = worker(w).id;
    if (a.type == ActionType::kForward) {
      const WorkerId routed = routes_->worker_of(a.owner, a.virtual_stage, a.microbatch);
      if (routed == self) return;
      at(Rule::kWrongWorker, w, i,
         "F belongs on worker " + to_string(routed) + ", where pipeline " + num(a.owner) +
             "'s micro-batch " + num(a.microbatch) + " is routed at stage " + num(self.stage));
      return;
    }
    // The inputs it holds on its own worker (semantics.hpp) were made there.
    for (const DataInput& input : data_inputs(a.type, a.virtual_stage, last)) {
      if (!input.same_worker) continue;
      const auto made = produced(input, a);
      if (!made || worker(made->worker).id == self) continue;
      const bool activations = input.producer == Producer::kForward;
      at(Rule::kWrongWorker, w, i,
         std::string(type_name(a.type)) + " must run on worker " +
             to_string(worker(made->worker).id) + ", which ran the " +
             (activations ? "F (" : "I (") + describe(*made) + ")" +
             (activations ? " and holds its activations" : ""));
    }
  });
}

void Checker::check_order() {
  const bool lowered = schedule_.is_lowered();
  const std::int32_t last = layout_.virtual_stages() - 1;
  for_each_indexed([&](std::int32_t w, std::int32_t i, const Action& a) {
    if (!is_first(w, i, a)) return;
    const std::int32_t v = a.virtual_stage;
    // `before` must come earlier on this worker than action i, if it runs here at all, in the same
    // iteration; from an earlier one (a lower lag) it may come anywhere; from a later one, never.
    const auto from_later_iteration = [&](std::optional<ActionRef> made) {
      if (!made || data_distance(a.lag, action(made->worker, made->index).lag) >= 0) return false;
      at(Rule::kOrder, w, i,
         "reads data of a later iteration: " + describe(*made) +
             " runs in the iteration after this action's (mark this one with ' as well)");
      return true;
    };
    const auto needs_earlier = [&](std::optional<ActionRef> before, const std::string& what) {
      if (!before || from_later_iteration(before)) return;
      const Action& made = action(before->worker, before->index);
      if (data_distance(a.lag, made.lag) > 0 || before->worker != w || before->index < i) return;
      at(Rule::kOrder, w, i,
         what + " (the " + std::string(type_name(made.type)) + " is action " + num(before->index) +
             ")");
    };
    const std::string type(type_name(a.type));
    if (is_comm(a.type)) {
      // A SEND goes after the compute whose output it sends, in its iteration.
      if (a.type != ActionType::kSendF && a.type != ActionType::kSendB) return;
      const DataInput sent{comm_compute(a.type), v, true};
      const auto compute = produced(sent, a);
      // Its iteration is its compute's: the same mark, or one more for a pair listed in the list
      // after its compute's (planner/language/lower.hpp, LaggedPairs::kReadersList).
      const std::int32_t later = compute ? a.lag - action(compute->worker, compute->index).lag : 0;
      if (later != 0 && later != 1) {
        at(Rule::kOrder, w, i,
           type + " of another iteration than the " +
               (sent.producer == Producer::kForward ? "F" : "backward") +
               " whose output it sends (" + describe(*compute) +
               "): a SEND carries its compute's ' mark, or one more in the list after its "
               "compute's");
        return;
      }
      if (later == 1) return;  // in the list after its compute's: anywhere in it
      needs_earlier(compute, type + " before the " +
                                 (sent.producer == Producer::kForward ? "F" : "backward") +
                                 " whose output it sends");
      return;
    }
    for (const DataInput& input : data_inputs(a.type, v, last)) {
      const bool forward = input.producer == Producer::kForward;
      if (input.same_worker) {
        needs_earlier(produced(input, a), type + (forward ? " before its F" : " before its I"));
      } else if (!lowered) {
        from_later_iteration(produced(input, a));
      } else {
        const ChunkAction recv = *chunk_action(recv_for(input.producer));
        needs_earlier(find(recv, a, v),
                      type + " before the " + (forward ? "RECV_F" : "RECV_B") + " that feeds it");
      }
    }
  });
  structural_ = structural_ || reported(Rule::kOrder);
}

void Checker::check_comms() {
  const std::int32_t last = layout_.virtual_stages() - 1;
  for_each_indexed([&](std::int32_t w, std::int32_t i, const Action& a) {
    if (!is_comm(a.type)) return;
    const ChunkAction kind = *chunk_action(a.type);
    const WorkerId self = worker(w).id;
    const std::int32_t v = a.virtual_stage;
    const std::string type(type_name(a.type));
    if (!is_first(w, i, a)) {
      at(Rule::kComm, w, i, type + " done twice (first at " + describe(*find(kind, a, v)) + ")");
      structural_ = true;  // which of the two pairs with the other side is ambiguous
      return;
    }
    const bool send = a.type == ActionType::kSendF || a.type == ActionType::kSendB;
    const Action other = partner(a);
    if (other.virtual_stage < 0 || other.virtual_stage > last) {
      at(Rule::kComm, w, i,
         type + " at virtual stage " + num(v) + ": there is no " +
             (other.virtual_stage < 0 ? "previous" : "next") + " virtual stage to " +
             (send ? "send to" : "receive from"));
      structural_ = true;
      return;
    }
    const ChunkAction compute = comm_compute(a.type) == Producer::kForward ? kF : kI;
    const WorkerId here = runs(compute, a, v);
    if (here != self) {
      at(Rule::kComm, w, i,
         type + " on the wrong worker: " + (compute == kF ? "the F" : "the backward") + " it " +
             (send ? "sends from" : "feeds") + " runs on worker " + to_string(here));
      structural_ = true;
    }
    if (const auto pair = find(*chunk_action(other.type), other, other.virtual_stage)) {
      if (send && action(pair->worker, pair->index).lag != a.lag) {
        at(Rule::kComm, w, i,
           type + " and its " + std::string(type_name(other.type)) + " (" + describe(*pair) +
               ") are of different iterations: both carry the ' mark of the compute that makes "
               "the data");
        structural_ = true;
      }
      return;
    }
    const WorkerId there = runs(compute, a, other.virtual_stage);
    at(Rule::kComm, w, i,
       "no matching " + std::string(type_name(other.type)) + " ('" + to_token(other, there.dp) +
           "') on worker " + to_string(there));
    structural_ = true;
  });
  if (!schedule_.is_lowered()) return;
  // A compute whose input comes from another worker with neither a SEND there nor a RECV here
  // (one side alone is reported above).
  for_each_indexed([&](std::int32_t w, std::int32_t i, const Action& a) {
    if (!is_compute(a.type) || !is_first(w, i, a)) return;
    const WorkerId self = worker(w).id;
    for (const DataInput& input : data_inputs(a.type, a.virtual_stage, last)) {
      if (input.same_worker) continue;
      const auto from = produced(input, a);
      if (!from || worker(from->worker).id == self) continue;
      const bool forward = input.producer == Producer::kForward;
      const Action recv{recv_for(input.producer), a.virtual_stage, a.microbatch, a.owner};
      const Action send = partner(recv);
      if (count(*chunk_action(recv.type), recv, recv.virtual_stage) > 0 ||
          count(*chunk_action(send.type), send, send.virtual_stage) > 0) {
        continue;
      }
      at(Rule::kComm, w, i,
         "needs " + std::string(forward ? "the output" : "the gradient") + " of " +
             describe(*from) + " but there is neither a " + std::string(type_name(send.type)) +
             " there nor a " + std::string(type_name(recv.type)) + " here");
      structural_ = true;
    }
  });
}

void Checker::check_iteration() {
  struct PerWorker {
    std::int32_t reduce = -1, opt = -1;
  };
  std::vector<PerWorker> found(schedule_.workers.size());
  for (std::size_t w = 0; w < schedule_.workers.size(); ++w) {
    const auto wi = static_cast<std::int32_t>(w);
    const std::vector<Action>& actions = schedule_.workers[w].actions;
    // The last W or B of each iteration the list holds (by lag), and whether a lagged one exists.
    std::array<std::int32_t, 2> last_weight{-1, -1};
    for (std::size_t i = 0; i < actions.size(); ++i) {
      const ActionType t = actions[i].type;
      if (t == ActionType::kBackwardWeight || t == ActionType::kBackward)
        last_weight[actions[i].lag == 0 ? 0 : 1] = static_cast<std::int32_t>(i);
    }
    for (std::size_t i = 0; i < actions.size(); ++i) {
      const auto ii = static_cast<std::int32_t>(i);
      const Action& a = actions[i];
      const ActionType t = a.type;
      if (!is_per_iteration(t)) continue;
      std::int32_t& first = t == ActionType::kReduceGrad ? found[w].reduce : found[w].opt;
      const std::string type(type_name(t));
      if (first >= 0) {
        at(Rule::kIteration, wi, ii, type + " done twice (first at action " + num(first) + ")");
        structural_ = true;
        continue;
      }
      first = ii;
      // It steps after its own iteration's last W/B; a W/B of an earlier iteration than its own
      // (a higher lag) would come after the step of its iteration.
      if (last_weight[a.lag == 0 ? 0 : 1] > ii) {
        at(Rule::kIteration, wi, ii,
           type + " before the worker's last W/B of its iteration (" +
               describe(wi, last_weight[a.lag == 0 ? 0 : 1]) + ")");
      }
      if (a.lag == 0 && last_weight[1] >= 0) {
        at(Rule::kIteration, wi, ii,
           type + " of this iteration, but " + describe(wi, last_weight[1]) +
               " belongs to the previous one, whose step comes after it: mark this " + type +
               " with ' and place it after that W/B");
      }
      if (t == ActionType::kOptimizer && found[w].reduce < 0) {
        const auto later = std::find_if(actions.begin() + ii, actions.end(), [](const Action& x) {
          return x.type == ActionType::kReduceGrad;
        });
        if (later != actions.end()) {
          at(Rule::kIteration, wi, ii,
             "OPT before REDUCE_GRAD (action " + num(later - actions.begin()) + ")");
        }
      }
      if (t == ActionType::kOptimizer && found[w].reduce >= 0 &&
          actions[static_cast<std::size_t>(found[w].reduce)].lag != a.lag) {
        at(Rule::kIteration, wi, ii,
           "OPT and REDUCE_GRAD (action " + num(found[w].reduce) +
               ") of different iterations: one ' mark on both");
      }
      if (t == ActionType::kOptimizer) {
        // The step ends its iteration: whatever follows it belongs to a later one.
        for (std::size_t k = i + 1; k < actions.size(); ++k) {
          if (actions[k].lag < a.lag) continue;
          at(Rule::kIteration, wi, ii,
             std::string(a.lag == 0 ? "OPT must end the worker's list"
                                    : "OPT' must follow every action of its iteration") +
                 " (the step ends the iteration), but " +
                 describe(wi, static_cast<std::int32_t>(k)) + " follows it");
          break;
        }
      }
    }
    // The weights each forward reads: the step `weight_versions` iterations before its own, which
    // must run earlier in the list when it falls in the same one.
    const std::int32_t opt_lag =
        found[w].opt >= 0 ? actions[static_cast<std::size_t>(found[w].opt)].lag : 0;
    for (std::int32_t i = 0; i < found[w].opt; ++i) {
      const Action& a = actions[static_cast<std::size_t>(i)];
      if (a.type != ActionType::kForward ||
          weights_distance(a.lag, opt_lag, schedule_.weight_versions) != 0)
        continue;
      at(Rule::kIteration, wi, i,
         "F reads the weights of the step listed after it (" + describe(wi, found[w].opt) + ")");
      break;
    }
  }
  // One iteration's all-reduce and step on every peer of a stage, and with the barrier on every
  // worker: their ' marks agree with the first such worker's.
  std::map<std::int32_t, std::int32_t> first_of_stage;  // stage -> worker
  std::int32_t first_of_all = -1;
  for (std::size_t w = 0; w < schedule_.workers.size(); ++w) {
    const auto wi = static_cast<std::int32_t>(w);
    if (found[w].opt < 0) continue;
    if (first_of_all < 0) first_of_all = wi;
    const std::int32_t other =
        schedule_.staggered_optimizer
            ? first_of_stage.try_emplace(worker(wi).id.stage, wi).first->second
            : first_of_all;
    const std::int32_t other_opt = found[static_cast<std::size_t>(other)].opt;
    if (action(other, other_opt).lag == action(wi, found[w].opt).lag) continue;
    at(Rule::kIteration, wi, found[w].opt,
       "steps for another iteration than " + describe(other, other_opt) +
           (schedule_.staggered_optimizer
                ? ", a peer of its stage: one ' mark on every OPT of a stage"
                : ": with the optimizer barrier, one ' mark on every OPT"));
  }
  // With two or more live peers a stage's gradients must be all-reduced before its step.
  std::map<std::int32_t, std::int32_t> peers;
  for (const WorkerSchedule& ws : schedule_.workers) ++peers[ws.id.stage];
  for (std::size_t w = 0; w < schedule_.workers.size(); ++w) {
    const PerWorker& f = found[w];
    const std::int32_t stage = schedule_.workers[w].id.stage;
    if (f.opt < 0 || f.reduce >= 0 || peers[stage] < 2) continue;
    at(Rule::kIteration, static_cast<std::int32_t>(w), f.opt,
       "OPT without REDUCE_GRAD: stage " + num(stage) +
           "'s gradients are not all-reduced over its " + num(peers[stage]) + " live peers");
  }
  // REDUCE_GRAD and OPT are listed on every live worker or on none (then each worker all-reduces
  // and steps after its last action): a worker that lists none among workers that do is a list
  // cut short, and its peers' all-reduce would wait for it.
  for (const bool reduce : {true, false}) {
    const auto has = [&](std::size_t w) { return (reduce ? found[w].reduce : found[w].opt) >= 0; };
    std::size_t with = schedule_.workers.size();
    for (std::size_t w = 0; w < schedule_.workers.size() && with == schedule_.workers.size(); ++w) {
      if (has(w)) with = w;
    }
    if (with == schedule_.workers.size()) continue;
    const std::string type = reduce ? "REDUCE_GRAD" : "OPT";
    structural_ = structural_ || std::any_of(found.begin(), found.end(), [&](const PerWorker& f) {
                    return (reduce ? f.reduce : f.opt) < 0;
                  });
    for (std::size_t w = 0; w < schedule_.workers.size(); ++w) {
      if (has(w)) continue;
      on(Rule::kIteration, worker(static_cast<std::int32_t>(w)).id,
         "worker " + to_string(worker(static_cast<std::int32_t>(w)).id) + " lists no " + type +
             " but worker " + to_string(worker(static_cast<std::int32_t>(with)).id) +
             " does: list it on every worker or on none");
    }
  }
}

void Checker::check_deadlock() {
  // Structural errors (workers listed twice or out of range, actions out of range, duplicated
  // actions, unpaired communication) make the graph ambiguous: which duplicate does a dependency
  // wait for? Same-worker order errors are cycles themselves, already reported with a clearer
  // reason.
  if (structural_) return;
  GraphOptions options;
  options.network = Network::kRuntime;
  options.staggered_optimizer = schedule_.staggered_optimizer;
  std::optional<ExecutionGraph> built;
  try {
    built.emplace(
        schedule_, [](WorkerId, const Action&) -> Nanos { return 0; }, options);
  } catch (const InputError& e) {  // unpaired communication the checks above did not name
    on(Rule::kComm, std::nullopt, e.what());
    return;
  }
  const ExecutionGraph& graph = *built;
  if (graph.ordered()) return;
  const DependencyGraph cycles_of(graph);
  const auto name = [&](std::int32_t node) -> std::string {
    switch (graph.kind(node)) {
      case ExecutionGraph::NodeKind::kCollective:
        return "the REDUCE_GRAD all-reduce of stage " +
               num(graph.collective_stage(graph.collective_index(node)));
      case ExecutionGraph::NodeKind::kBarrier:
        return "the optimizer barrier";
      case ExecutionGraph::NodeKind::kTransfer: {
        const auto s = graph.position(graph.transfer_send(graph.transfer_index(node)));
        const auto r = graph.position(graph.transfer_recv(graph.transfer_index(node)));
        return "the transfer of " + describe(s.worker, s.index) + " to " +
               describe(r.worker, r.index);
      }
      case ExecutionGraph::NodeKind::kAction:
        break;
    }
    const auto p = graph.position(node);
    if (p.index < static_cast<std::int32_t>(worker(p.worker).actions.size()))
      return describe(p.worker, p.index);
    return "worker " + to_string(worker(p.worker).id) + "'s " +
           std::string(type_name(graph.action(p.worker, p.index).type)) + " after its last action";
  };
  const auto is_action = [&](std::int32_t node) {
    return graph.kind(node) == ExecutionGraph::NodeKind::kAction;
  };
  for (const std::vector<std::int32_t>& cycle : cycles_of.cycles()) {
    // Told in waiting order: the start waits for the last node, which waits for the one before...
    std::vector<std::int32_t> chain{cycle.front()};
    chain.insert(chain.end(), cycle.rbegin(), cycle.rend());
    std::set<WorkerId> workers;
    std::string story = name(chain.front());
    for (std::size_t k = 0; k + 1 < chain.size();) {
      const std::int32_t a = chain[k];
      std::size_t next = k + 1;
      const auto sequential = [&](std::int32_t later, std::int32_t earlier) {
        if (!is_action(later) || !is_action(earlier)) return false;
        const auto l = graph.position(later), e = graph.position(earlier);
        return l.worker == e.worker && l.index > e.index;
      };
      std::string verb = "needs";
      if (!is_action(a) || !is_action(chain[next])) {
        verb = "waits for";
      } else if (sequential(a, chain[next])) {
        verb = "runs after";
        while (next + 1 < chain.size() && sequential(chain[next], chain[next + 1])) ++next;
      }
      story += (k == 0 ? " " : ", which ") + verb + " " + name(chain[next]);
      k = next;
    }
    for (const std::int32_t node : cycle) {
      if (is_action(node)) workers.insert(worker(graph.position(node).worker).id);
    }
    std::string list;
    for (const WorkerId id : workers) list += (list.empty() ? "" : ", ") + to_string(id);
    const auto start = graph.position(cycle.front());
    out_.push_back(
        {Rule::kDeadlock,
         start.worker >= 0 ? std::optional<WorkerId>(worker(start.worker).id) : std::nullopt,
         start.worker >= 0 &&
                 start.index < static_cast<std::int32_t>(worker(start.worker).actions.size())
             ? start.index
             : -1,
         "deadlock between worker" + std::string(workers.size() > 1 ? "s " : " ") + list + ": " +
             story});
  }
}

void Checker::check_memory(std::int32_t limit) {
  const std::int64_t chunks = chunk_limit(limit, layout_.interleave);
  for (std::size_t w = 0; w < schedule_.workers.size(); ++w) {
    const Inflight held = inflight(schedule_.workers[w].actions, chunks);
    if (held.first_over < 0) continue;
    at(Rule::kMemory, static_cast<std::int32_t>(w), held.first_over,
       "holds " + num(chunks + 1) + " chunks of activations here, over the memory limit of " +
           num(limit) + (limit == 1 ? " micro-batch (" : " micro-batches (") + num(chunks) +
           " chunks at interleave " + num(layout_.interleave) + "); peak " + num(held.peak));
  }
}

}  // namespace

std::string summarize(const std::vector<Violation>& violations) {
  if (violations.empty()) return "";
  std::string out = "invalid schedule: " + violations.front().message;
  if (violations.size() > 1) out += " (and " + num(std::ssize(violations) - 1) + " more)";
  return out;
}

void require_valid(const Schedule& schedule, const std::string& where,
                   const ValidationOptions& options) {
  const std::string problem = summarize(validate(schedule, options));
  if (!problem.empty()) throw InputError(where, problem);
}

std::string_view rule_name(Rule rule) noexcept {
  switch (rule) {
    case Rule::kLayout:
      return "layout";
    case Rule::kWorker:
      return "worker";
    case Rule::kAction:
      return "action";
    case Rule::kMissing:
      return "missing";
    case Rule::kDuplicate:
      return "duplicate";
    case Rule::kWrongWorker:
      return "wrong-worker";
    case Rule::kOrder:
      return "order";
    case Rule::kRoute:
      return "route";
    case Rule::kComm:
      return "comm";
    case Rule::kIteration:
      return "iteration";
    case Rule::kDeadlock:
      return "deadlock";
    case Rule::kMemory:
      return "memory";
  }
  return "?";
}

std::vector<Violation> validate(const Schedule& schedule, const ValidationOptions& options) {
  std::vector<Violation> violations;
  Checker checker(schedule, violations);
  if (!checker.check_layout()) return violations;
  checker.prepare();
  checker.check_workers();
  checker.check_routes();
  checker.check_actions();
  checker.check_coverage();
  checker.check_placement();
  checker.check_order();
  checker.check_comms();
  checker.check_iteration();
  checker.check_deadlock();
  if (options.memory_limit) checker.check_memory(*options.memory_limit);
  return violations;
}

std::vector<std::int32_t> peak_inflight_chunks(const Schedule& schedule) {
  std::vector<std::int32_t> peaks;
  peaks.reserve(schedule.workers.size());
  for (const WorkerSchedule& worker : schedule.workers) {
    peaks.push_back(inflight(worker.actions, std::numeric_limits<std::int64_t>::max()).peak);
  }
  return peaks;
}

}  // namespace recycle::planner
