#include "planner/language/work_limits.hpp"
#include "planner/planning_work.hpp"

#include <doctest/doctest.h>

#include "core/error.hpp"

using namespace recycle::planner;

TEST_CASE("the largest schedule is 2^23 chunks: pp 64 x dp 512 x 256 micro-batches") {
  CHECK(chunks({512, 64, 256, 1}) == 8'388'608);
  CHECK_NOTHROW(require_chunks({512, 64, 256, 1}, "--dp"));
  // One pipeline more: 513 x 64 x 256 = 8,404,992 chunks.
  CHECK_THROWS_WITH_AS(require_chunks({513, 64, 256, 1}, "--dp x --pp"),
                       doctest::Contains("= 8404992 chunks"), recycle::InputError);
  // Interleave counts: 512 x 64 x 128 x 2 is the limit again.
  CHECK(chunks({512, 64, 128, 2}) == 8'388'608);
}

TEST_CASE("a plan's work: its chunks, at least 2^15 when the order search runs") {
  // pp 4 x dp 8 x 4 micro-batches: 128 chunks, 384 actions (<= 20,000: searched).
  CHECK(plan_work({8, 4, 4, 1}) == 32'768);
  CHECK(max_plans({8, 4, 4, 1}) == 1'024);  // 2^25 / 2^15
  // pp 16 x dp 128 x 4: 8,192 chunks, 24,576 actions (past the search).
  CHECK(plan_work({128, 16, 4, 1}) == 8'192);
  CHECK(max_plans({128, 16, 4, 1}) == 4'096);
  CHECK_NOTHROW(require_planning_work(4'096, {128, 16, 4, 1}, "--max-failures", "t"));
  CHECK_THROWS_WITH_AS(require_planning_work(4'097, {128, 16, 4, 1}, "--max-failures", "t"),
                       doctest::Contains("4097 plans of about 8192 chunks"), recycle::InputError);
}

TEST_CASE("a simulation keeps chunks x (iterations + 4) up to 2^26") {
  // At the largest schedule (2^23 chunks) 4 iterations fit exactly: 2^23 x 8 = 2^26.
  CHECK_NOTHROW(require_simulation({512, 64, 256, 1}, 4));
  CHECK_THROWS_WITH_AS(require_simulation({512, 64, 256, 1}, 5),
                       doctest::Contains("4 iterations fit"), recycle::InputError);
  // 49,152 chunks (pp 16 x dp 16 x 192): 2^26 / 49,152 = 1,365 -> 1,361 iterations.
  CHECK_NOTHROW(require_simulation({16, 16, 192, 1}, 1'000));
  CHECK_THROWS_WITH_AS(require_simulation({16, 16, 192, 1}, 1'362),
                       doctest::Contains("1361 iterations fit"), recycle::InputError);
  // Drawing: 2^20 chunk-iterations.
  CHECK_NOTHROW(require_traced({16, 16, 64, 1}, 64, "--svg"));  // 16,384 x 64 = 2^20
  CHECK_THROWS_AS(require_traced({16, 16, 64, 1}, 65, "--svg"), recycle::InputError);
}
