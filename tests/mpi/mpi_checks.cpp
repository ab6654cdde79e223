// Multi-process runs (executor/mpi/processes.hpp) against one-process runs of the same schedule:
// run by CTest under mpirun with 2 and 3 processes. Process 0 runs the checks; the others serve
// its runs. A fault-free run in several processes must give bit for bit the weights and losses of
// the one-process run (the all-reduce by message sums in the same order); a kill of a worker in
// another process must be found through the forwarded heartbeats, and the survivors must end
// where the sequential loop over the global batch ends.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "executor/mpi/processes.hpp"
#include "executor/runtime.hpp"
#include "planner/generators.hpp"
#include "tests/executor/reference.hpp"

using namespace recycle;
using namespace recycle::executor;
using namespace recycle::executor::testing;
using planner::Layout;
using planner::WorkerId;

namespace {

mpi::Processes& processes() {
  return *mpi::current();
}

planner::Schedule fault_free(const std::string& name, const Layout& layout) {
  planner::GeneratorOptions options;
  options.layout = layout;
  return planner::generate_fault_free(name, options);
}

/// The worker's actions in the order they ran (dropped ones included).
std::vector<planner::Action> order_of(const WorkerRun& w) {
  std::vector<planner::Action> out;
  for (const TimedAction& t : w.timeline) out.push_back(t.action);
  return out;
}

void check_same_run(const RunResult& many, const RunResult& one) {
  CHECK(many.microbatches_processed == one.microbatches_processed);
  CHECK(many.loss == one.loss);  // bit for bit
  REQUIRE(many.workers.size() == one.workers.size());
  for (std::size_t w = 0; w < one.workers.size(); ++w) {
    CAPTURE(planner::to_string(one.workers[w].id));
    CHECK(many.workers[w].id == one.workers[w].id);
    CHECK(many.workers[w].killed == one.workers[w].killed);
    CHECK(order_of(many.workers[w]) == order_of(one.workers[w]));
    CHECK(many.workers[w].parameters == one.workers[w].parameters);  // bit for bit
  }
}

}  // namespace

TEST_CASE("a fault-free run in several processes is the one-process run, bit for bit") {
  struct Case {
    const char* schedule;
    Layout layout;
  };
  for (const Case& c : {Case{"1f1b", {2, 2, 4, 1}}, Case{"zb-h1", {4, 1, 8, 1}},
                        Case{"gpipe", {2, 3, 4, 1}}, Case{"zb-h2", {3, 2, 6, 1}}}) {
    CAPTURE(c.schedule);
    const planner::Schedule schedule = fault_free(c.schedule, c.layout);
    const RunConfig config = small_config();
    const RunResult one = run_on_cpu(schedule, config);
    const RunResult many = processes().run_on_cpu(schedule, config);
    check_same_run(many, one);
    CHECK(many.microbatches_processed ==
          static_cast<std::int64_t>(config.iterations) * c.layout.dp * c.layout.microbatches);
  }
}

TEST_CASE("a ReCycle plan's re-routed micro-batches cross processes as in one process") {
  const Layout layout{2, 3, 4, 1};
  const planner::Schedule plan = recycle_plan(layout, {{1, 0}});
  const RunConfig config = small_config();
  const RunResult many = processes().run_on_cpu(plan, config);
  check_same_run(many, run_on_cpu(plan, config));
  // And the weights are those of the sequential loop over the global batch.
  check_trained_like_sequential(many, layout, config);
}

TEST_CASE("a worker killed in another process is found by its forwarded heartbeats") {
  // Workers go to processes in blocks of flat ids (dp x pp + stage): the last worker, (1, 1),
  // runs in the last process, never in process 0.
  const Layout layout{2, 2, 4, 1};
  RunConfig config = small_config();
  config.iterations = 5;
  config.heartbeat.period = std::chrono::milliseconds(25);
  config.heartbeat.missed = 4;
  config.kills.push_back({{1, 1}, 2, 0.5, recycle_plan(layout, {{1, 1}})});
  const RunResult run = processes().run_on_cpu(fault_free("1f1b", layout), config);

  REQUIRE(run.recoveries.size() == 1);
  const Recovery& r = run.recoveries.front();
  CHECK(r.killed == WorkerId{1, 1});
  CHECK(r.detect_ns > r.kill_ns);
  CHECK(r.detect_ns - r.last_beat_ns >
        config.heartbeat.missed *
            std::chrono::duration_cast<std::chrono::nanoseconds>(config.heartbeat.period).count());
  CHECK(r.resumed_at <= 2);
  CHECK(run.segment_start == std::vector<std::int32_t>{0, r.resumed_at});
  for (const WorkerRun& w : run.workers) CHECK(w.killed == (w.id == WorkerId{1, 1}));
  check_trained_like_sequential(run, layout, config);
}

TEST_CASE("a kill late in the last iteration, in another process, is found and redone") {
  // The survivors finish without waiting on the killed worker; every process's monitor finds it
  // silent, whichever first, and the iteration it left is dropped and redone.
  const Layout layout{2, 2, 4, 1};
  RunConfig config = small_config();
  config.heartbeat.period = std::chrono::milliseconds(25);
  config.heartbeat.missed = 4;
  config.kills.push_back({{1, 1}, config.iterations - 1, 0.95, recycle_plan(layout, {{1, 1}})});
  for (int repeat = 0; repeat < 3; ++repeat) {
    const RunResult run = processes().run_on_cpu(fault_free("1f1b", layout), config);
    REQUIRE(run.recoveries.size() == 1);
    CHECK(run.recoveries.front().resumed_at == config.iterations - 1);
    check_trained_like_sequential(run, layout, config);
  }
}

TEST_CASE("a run refused as bad input is refused in every process, and the next run goes on") {
  const Layout layout{2, 2, 4, 1};
  RunConfig config = small_config();
  config.kills.push_back({{5, 0}, 1, 0.5, recycle_plan(layout, {{1, 1}})});
  CHECK_THROWS_AS(static_cast<void>(processes().run_on_cpu(fault_free("1f1b", layout), config)),
                  InputError);
  config.kills.clear();
  const RunResult run = processes().run_on_cpu(fault_free("1f1b", layout), config);
  CHECK(run.microbatches_processed ==
        static_cast<std::int64_t>(config.iterations) * layout.dp * layout.microbatches);
}

int main(int argc, char** argv) {
  const auto started = mpi::Processes::start(&argc, &argv);
  if (started == nullptr) {
    std::fprintf(stderr, "error: run under mpirun with 2 or more processes\n");
    return 2;
  }
  if (started->rank() > 0) return started->serve(mpi::run_on_cpu);
  mpi::set_current(started.get());
  doctest::Context context(argc, argv);
  const int failed = context.run();
  mpi::set_current(nullptr);
  return failed;
}
