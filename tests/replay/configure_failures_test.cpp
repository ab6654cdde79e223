// The configuration ranking under failures (sim/replay/configure_failures.hpp): on a trace with
// no failures it is the fault-free ranking, whatever the policies; the answer does not depend on
// the number of threads; configurations of one model replay once and rank alike.
#include <doctest/doctest.h>

#include <string>

#include "planner/configure.hpp"
#include "profiles/shipped.hpp"
#include "sim/replay/configure_failures.hpp"
#include "traces/native_csv.hpp"

namespace {

using recycle::sim::FailureRow;
using recycle::sim::PolicyKind;

recycle::planner::ConfigureResult fault_free(std::int32_t top) {
  recycle::planner::ConfigureSpace space;
  space.model = recycle::profiles::shipped_model("gpt3-350m", "model");
  space.gpu = recycle::profiles::shipped_gpu("a100-80g", "hardware");
  space.gpus = 16;
  space.global_batch = 32;
  space.max_microbatch_size = 2;
  space.top = top;
  return recycle::planner::configure(space);
}

recycle::sim::FailureSpace space_on(const std::string& events, std::vector<PolicyKind> policies) {
  recycle::sim::FailureSpace s;
  s.model = "gpt3-350m";
  s.hardware = "a100-80g";
  s.policies = std::move(policies);
  // Two 8-GPU nodes (every configuration of 16 GPUs), 10 days.
  s.trace =
      recycle::traces::parse_native_csv(
          "# nodes: 2\n# duration_s: 864000\ntime_s,node,event,cause\n" + events, "trace.csv", {})
          .trace;
  s.days = 0;
  return s;
}

}  // namespace

TEST_CASE("configure under failures: with no failures the ranking is the fault-free one") {
  const auto ff = fault_free(12);
  REQUIRE(ff.ranked.size() == 12);
  const auto rows = recycle::sim::rank_under_failures(
      ff.ranked, space_on("", {PolicyKind::kRecycle, PolicyKind::kCheckpoint}));
  REQUIRE(rows.size() == 24);
  // Per policy, the configurations in fault-free order, each at B / T less the same share of
  // checkpoint writes.
  for (const PolicyKind policy : {PolicyKind::kRecycle, PolicyKind::kCheckpoint}) {
    std::vector<std::size_t> order;
    for (const FailureRow& r : rows) {
      if (r.policy == policy) order.push_back(r.candidate);
    }
    std::vector<std::size_t> expected(12);
    for (std::size_t i = 0; i < 12; ++i) expected[i] = i;
    CHECK(order == expected);
  }
  const double share = rows.front().samples_per_s /
                       (32 / recycle::to_seconds(ff.ranked[rows.front().candidate].iteration));
  for (const FailureRow& r : rows) {
    const double t = recycle::to_seconds(ff.ranked[r.candidate].iteration);
    CHECK(r.samples_per_s == doctest::Approx(share * 32 / t).epsilon(1e-9));
    CHECK(r.goodput == doctest::Approx(share).epsilon(1e-9));
  }
}

TEST_CASE("configure under failures: the same answer on one thread or two") {
  const auto ff = fault_free(6);
  auto one = space_on("86400,0,down,x\n90000,0,up,\n400000,1,down,x\n500000,1,up,\n",
                      {PolicyKind::kRecycle, PolicyKind::kElastic});
  one.threads = 1;
  auto two = one;
  two.threads = 2;
  const auto a = recycle::sim::rank_under_failures(ff.ranked, one);
  const auto b = recycle::sim::rank_under_failures(ff.ranked, two);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].candidate == b[i].candidate);
    CHECK(a[i].policy == b[i].policy);
    CHECK(a[i].samples_per_s == b[i].samples_per_s);
    CHECK(a[i].lost_s == b[i].lost_s);
  }
  // The failures cost something: below the fault-free rate of the same configuration.
  const auto none = recycle::sim::rank_under_failures(
      ff.ranked, space_on("", {PolicyKind::kRecycle, PolicyKind::kElastic}));
  for (const FailureRow& r : a) {
    for (const FailureRow& n : none) {
      if (n.candidate == r.candidate && n.policy == r.policy)
        CHECK(r.samples_per_s < n.samples_per_s);
    }
  }
}
