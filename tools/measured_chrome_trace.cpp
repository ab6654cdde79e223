#include "tools/measured_chrome_trace.hpp"

#include "planner/language/semantics.hpp"
#include "sim/chrome_trace.hpp"

namespace recycle::tools {

std::string measured_chrome_trace(const planner::Schedule& first, const executor::RunResult& run) {
  sim::ChromeTraceWriter out(first);
  using Track = sim::ChromeTraceWriter::Track;
  for (const executor::WorkerRun& w : run.workers) {
    for (const executor::TimedAction& t : w.timeline) {
      const planner::Action& a = t.action;
      const Track track = a.type == planner::ActionType::kReduceGrad ? Track::kAllReduce
                          : planner::stream_of(a.type) == planner::Stream::kCompute
                              ? Track::kCompute
                              : Track::kComm;
      std::string args = sim::action_args(a, w.id.dp, t.iteration);
      if (t.dropped) args += R"(,"dropped":true)";
      if (t.cpu_ns >= 0) args += R"(,"processor_us":)" + sim::trace_micros(t.cpu_ns);
      out.slice(w.id, track, planner::to_token(a, w.id.dp),
                t.dropped ? "dropped" : planner::type_name(a.type), t.start_ns, t.end_ns, args);
    }
  }
  for (const executor::Recovery& r : run.recoveries) {
    out.mark(r.killed, "killed", r.kill_ns);
    out.mark(r.killed, "found silent", r.detect_ns);
    out.mark(r.killed, "survivors resume", r.resume_ns);
  }
  return std::move(out).finish();
}

}  // namespace recycle::tools
