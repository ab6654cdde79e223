#include "sim/chrome_trace.hpp"

#include <fmt/format.h>

#include <iterator>

#include "planner/language/semantics.hpp"

namespace recycle::sim {

namespace {

using planner::Action;
using planner::ActionType;

constexpr const char* kTrackNames[] = {"", "compute", "communication", "all-reduce"};

}  // namespace

std::string trace_micros(Nanos ns) {
  return fmt::format("{}.{:03}", ns / 1000, ns % 1000);
}

ChromeTraceWriter::ChromeTraceWriter(const planner::Schedule& schedule) : pp_(schedule.layout.pp) {
  for (const planner::WorkerSchedule& ws : schedule.workers) {
    const std::int64_t pid = pid_of(ws.id);
    event(fmt::format(
        R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"worker {}"}}}})", pid,
        planner::to_string(ws.id)));
    event(fmt::format(
        R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
        pid, pid));
    for (int track = kCompute; track <= kAllReduce; ++track) {
      event(fmt::format(
          R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"{}"}}}})", pid,
          track, kTrackNames[track]));
      event(fmt::format(
          R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
          pid, track, track));
    }
  }
}

void ChromeTraceWriter::slice(planner::WorkerId worker, Track track, const std::string& name,
                              std::string_view category, Nanos start, Nanos end,
                              const std::string& args) {
  event(fmt::format(
      R"({{"ph":"X","name":"{}","cat":"{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{{}}}}})",
      name, category, pid_of(worker), static_cast<int>(track), trace_micros(start),
      trace_micros(end - start), args));
}

void ChromeTraceWriter::mark(planner::WorkerId worker, const std::string& name, Nanos at) {
  event(fmt::format(R"({{"ph":"i","s":"p","name":"{}","pid":{},"tid":{},"ts":{}}})", name,
                    pid_of(worker), static_cast<int>(kCompute), trace_micros(at)));
}

std::string ChromeTraceWriter::finish() && {
  if (first_) out_ = "{\"traceEvents\":[";
  out_ += "\n],\"displayTimeUnit\":\"ns\"}\n";
  return std::move(out_);
}

std::int64_t ChromeTraceWriter::pid_of(planner::WorkerId id) const noexcept {
  return static_cast<std::int64_t>(planner::worker_index(id, static_cast<std::size_t>(pp_))) + 1;
}

void ChromeTraceWriter::event(const std::string& text) {
  out_ += first_ ? "{\"traceEvents\":[\n" : ",\n";
  first_ = false;
  out_ += text;
}

std::string action_args(const Action& a, std::int32_t worker_dp, std::int32_t iteration) {
  std::string args = fmt::format(R"("iteration":{})", iteration);
  if (a.microbatch >= 0)
    args += fmt::format(R"(,"microbatch":{},"owner":{})", a.microbatch, a.owner);
  if (a.owner >= 0 && a.owner != worker_dp) args += R"(,"rerouted":true)";
  return args;
}

std::string chrome_trace(const SimRun& run, std::optional<std::int32_t> iteration) {
  const Timeline& t = run.timeline;
  const auto wanted = [&](std::int32_t i) { return !iteration || *iteration == i; };
  ChromeTraceWriter out(run.schedule);
  for (std::size_t w = 0; w < t.workers(); ++w) {
    const planner::WorkerSchedule& ws = run.schedule.workers[w];
    for (std::int32_t i = 0; i < t.iterations; ++i) {
      if (!wanted(i)) continue;
      for (std::size_t pc = 0; pc < ws.actions.size(); ++pc) {
        const Action& a = ws.actions[pc];
        const ActionRecord& r = t.at(w, i, pc);
        const bool busy = planner::is_compute(a.type) || a.type == ActionType::kOptimizer;
        if (!busy || r.end == r.start) continue;
        out.slice(ws.id, ChromeTraceWriter::kCompute, planner::to_token(a, ws.id.dp),
                  planner::type_name(a.type), r.start, r.end, action_args(a, ws.id.dp, i));
      }
    }
  }
  for (const TransferRecord& x : t.transfers) {
    if (!wanted(x.iteration) || x.end == x.start) continue;
    const auto at = t.locate(static_cast<std::size_t>(x.send_action));
    const planner::WorkerSchedule& from = run.schedule.workers[at.worker];
    const planner::WorkerSchedule& to = run.schedule.workers[static_cast<std::size_t>(x.to)];
    const Action& send = from.actions[at.action];
    const Action recv = planner::partner(send);
    const std::string args = action_args(send, from.id.dp, x.iteration);
    out.slice(from.id, ChromeTraceWriter::kComm,
              planner::to_token(send, from.id.dp) + " -> " + planner::to_string(to.id),
              planner::type_name(send.type), x.start, x.end, args);
    out.slice(to.id, ChromeTraceWriter::kComm,
              planner::to_token(recv, to.id.dp) + " <- " + planner::to_string(from.id),
              planner::type_name(recv.type), x.start, x.end, args);
  }
  for (const CollectiveRecord& c : t.collectives) {
    if (!wanted(c.iteration) || c.end == c.start) continue;
    for (const planner::WorkerSchedule& ws : run.schedule.workers) {
      if (ws.id.stage != c.stage) continue;
      out.slice(ws.id, ChromeTraceWriter::kAllReduce, std::to_string(c.stage) + "REDUCE_GRAD",
                "REDUCE_GRAD", c.start, c.end, fmt::format(R"("iteration":{})", c.iteration));
    }
  }
  return std::move(out).finish();
}

}  // namespace recycle::sim
