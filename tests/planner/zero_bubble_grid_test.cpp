// Against Zero Bubble's own scheduler (sail-sg/zero-bubble-pipeline-parallelism,
// zerobubble/scheduler/zb.py) on its results in ../shared/reference: one pipeline, uniform
// per-stage costs, memory K micro-batches of activations. ZB's objective is the longest stage span,
// which is the steady-state period with a staggered optimizer; ZB reaches its lower bound on every
// input, so "never worse" means "equal". Our schedules are timed as `recycle simulate` times them:
// on a free network (first grid), and with ZB's communication model (a latency c on every transfer
// and nothing else: our direct network) for the second. The tests are reported skipped when
// ../shared is not there.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "planner/generators.hpp"
#include "planner/recycle_planner.hpp"
#include "planner/timing/cost_model.hpp"
#include "planner/timing/period.hpp"
#include "tests/shared_data.hpp"

namespace {

using namespace recycle::planner;
using recycle::Nanos;

/// The numeric rows of ../shared/reference/`name` (comments and the header skipped), or nullopt
/// when it is absent.
std::optional<std::vector<std::vector<double>>> reference_rows(const std::string& name) {
  const auto path = recycle::testing::shared_file("reference/" + name);
  if (!path) return std::nullopt;
  std::vector<std::vector<double>> rows;
  std::ifstream in(*path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line[0] == 'p') continue;
    std::stringstream fields(line);
    std::string field;
    std::vector<double> row;
    while (std::getline(fields, field, ',')) row.push_back(std::stod(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

/// Costs in whole units, scaled so that ZB's half-unit latencies are whole nanoseconds.
constexpr double kUnit = 1000;

Nanos ns(double units) {
  return static_cast<Nanos>(units * kUnit);
}

/// One reference row: the layout, the per-stage costs, the memory limit K and ZB's period (its
/// span). `memory_column` and `span_column` say where the grid keeps them.
struct GridRow {
  std::int32_t pp = 0;
  std::int32_t m = 0;
  StageCost cost;
  std::int32_t memory = 0;
  Nanos zb = 0;
};

GridRow grid_row(const std::vector<double>& r, std::size_t memory_column, std::size_t span_column) {
  return {static_cast<std::int32_t>(r[0]), static_cast<std::int32_t>(r[1]),
          StageCost{ns(r[2]), ns(r[3]), ns(r[4])}, static_cast<std::int32_t>(r[memory_column]),
          ns(r[span_column])};
}

struct Ours {
  Nanos zb_h2 = 0;    ///< zb-h2 planned for K and the staggered optimizer
  Nanos recycle = 0;  ///< fault-free recycle with memory K
};

/// Both planned for, and timed on, the network `run` says.
Ours periods(Layout layout, std::int32_t memory, const CostModel& model, const RunOptions& run) {
  GeneratorOptions gen;
  gen.layout = layout;
  gen.model = model;
  gen.memory_limit = memory;
  gen.staggered_optimizer = true;
  gen.run = run;
  const Schedule h2 = generate_fault_free("zb-h2", gen);
  RecycleOptions options;
  options.layout = layout;
  options.model = model;
  options.memory_limit = memory;
  options.run = run;
  const Schedule rc = plan_recycle(options).schedule;
  Ours out;
  out.zb_h2 = steady_state(h2, model, run)->period;
  out.recycle = steady_state(rc, model, run)->period;
  return out;
}

}  // namespace

TEST_CASE("Zero Bubble's grid, free network: zb-h2 and recycle are never worse than its period") {
  const auto found = reference_rows("zb-scheduler-grid.csv");
  if (!found) return recycle::testing::skip_without("reference/zb-scheduler-grid.csv");
  const auto& rows = *found;
  CHECK(rows.size() == 54);
  std::string table;
  for (const auto& r : rows) {
    // pp, microbatches, F, I, W, K, zb_makespan, zb_span, lb_makespan, lb_span
    const auto [pp, m, cost, memory, zb] = grid_row(r, 5, 7);
    CAPTURE(pp);
    CAPTURE(m);
    CAPTURE(r[2]);
    CAPTURE(r[3]);
    CAPTURE(memory);
    const CostModel model = CostModel::compute_only(Costs::uniform(pp, cost));
    const Ours ours = periods({1, pp, m, 1}, memory, model, {});
    CHECK(ours.zb_h2 <= zb);
    CHECK(ours.recycle <= zb);
    char line[160];
    std::snprintf(line, sizeof line,
                  "  pp %2d m %2d F,I,W %g,%g,%g K %2d: ZB %6g  zb-h2 %6g  recycle %6g\n", pp, m,
                  r[2], r[3], r[4], memory, r[7], static_cast<double>(ours.zb_h2) / kUnit,
                  static_cast<double>(ours.recycle) / kUnit);
    table += line;
  }
  const std::string report = "steady-state period, staggered optimizer, free network:\n" + table;
  MESSAGE(report);
}

TEST_CASE("Zero Bubble's grid with its communication model: never worse than its period") {
  const auto found = reference_rows("zb-scheduler-grid-comm.csv");
  if (!found) return recycle::testing::skip_without("reference/zb-scheduler-grid-comm.csv");
  const auto& rows = *found;
  CHECK(rows.size() == 18);
  std::string table;
  for (const auto& r : rows) {
    // pp, microbatches, F, I, W, comm, K, zb_makespan, zb_span, lb_makespan, lb_span
    const auto [pp, m, cost, memory, zb] = grid_row(r, 6, 8);
    CAPTURE(pp);
    CAPTURE(m);
    CAPTURE(r[2]);
    CAPTURE(r[3]);
    CAPTURE(memory);
    // ZB's cost_comm: every transfer between stages takes c, whatever its size: a link of latency
    // c and unlimited bandwidth, every stage on its own node.
    CostModel model = CostModel::compute_only(Costs::uniform(pp, cost));
    model.output_bytes.assign(static_cast<std::size_t>(pp), 1);
    recycle::profiles::HardwareSpec hardware;
    hardware.gpus_per_node = 1;
    hardware.intra_node_latency = hardware.inter_node_latency = ns(r[5]);
    model.cluster = Cluster(hardware, 1, pp);
    RunOptions direct;
    direct.network = Network::kDirect;
    const Ours ours = periods({1, pp, m, 1}, memory, model, direct);
    CHECK(ours.zb_h2 <= zb);
    CHECK(ours.recycle <= zb);
    // Planned for and run on the runtime network, where each transfer also holds both workers'
    // communication streams and waits for both sides: for the record, not comparable with ZB.
    const Ours runtime = periods({1, pp, m, 1}, memory, model, {});
    char line[200];
    std::snprintf(
        line, sizeof line,
        "  pp %2d m %2d F,I,W %g,%g,%g c %g K %2d: ZB %6g  zb-h2 %6g  recycle %6g  "
        "(runtime network: %g)\n",
        pp, m, r[2], r[3], r[4], r[5], memory, r[8], static_cast<double>(ours.zb_h2) / kUnit,
        static_cast<double>(ours.recycle) / kUnit, static_cast<double>(runtime.recycle) / kUnit);
    table += line;
  }
  const std::string report =
      "steady-state period, staggered optimizer, ZB's communication model:\n" + table;
  MESSAGE(report);
}
