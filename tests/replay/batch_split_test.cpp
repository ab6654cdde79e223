// Oobleck's batch split (sim/replay/batch_split.hpp), worked by hand.
#include <doctest/doctest.h>

#include "sim/replay/batch_split.hpp"

using recycle::sim::split_batch;
using recycle::sim::TemplateShare;

TEST_CASE("batch split: equal templates share the batch equally, the remainder one each") {
  // 4 pipelines of one template, 10 micro-batches: 3, 3, 2, 2 -> the most is 3.
  CHECK(split_batch({{4, 100, 1}}, 10) == std::vector<std::int64_t>{3});
  CHECK(split_batch({{4, 100, 1}}, 8) == std::vector<std::int64_t>{2});
}

TEST_CASE("batch split: GPT-3 175B on 126 of 128 workers, as Oobleck splits it") {
  // 14 pipelines of 8 stages and 2 of 7 (the 96 layers re-split, each stage 8/7 as long), 1,024
  // micro-batches; 1F1B's time for n micro-batches is (n + p - 1) stage-times. Per micro-batch
  // at Oobleck's 4 x stages: 8 stages (32 + 7) / 32 = 39/32; 7 stages (28 + 6) x 8/7 / 28 =
  // 272/196. Min-max: the 8-stage pipelines carry 65 (65 x 39/32 = 79.2), the 7-stage ones 57
  // (57 x 272/196 = 79.1): 14 x 65 + 2 x 57 = 1,024. Splitting in proportion to stages (65.0 and
  // 56.9) and giving the two left over to the longest pipelines put 66 on two of them instead.
  const std::vector<TemplateShare> templates{{14, 39, 32}, {2, 272, 196}};
  CHECK(split_batch(templates, 1024) == std::vector<std::int64_t>{65, 57});
}

TEST_CASE("batch split: a template too slow to carry any micro-batch gets none") {
  // One fast pipeline (1 per micro-batch) and one 10x slower, 5 micro-batches: the fast one
  // carries all 5 by time 5, where the slow one would need 10 for its first.
  CHECK(split_batch({{1, 1, 1}, {1, 10, 1}}, 5) == std::vector<std::int64_t>{5, 0});
  // 11 micro-batches: at time 10 the fast one holds 10 and the slow one 1.
  CHECK(split_batch({{1, 1, 1}, {1, 10, 1}}, 11) == std::vector<std::int64_t>{10, 1});
}

TEST_CASE("batch split: the excess over the batch comes from the binding pipelines") {
  // Two templates of equal speed, 3 pipelines each, 7 micro-batches: at level 2 the six hold 12;
  // at level 1 they hold 6 < 7, so the level is 2 and 5 of the 6 give one back: the first
  // template's 3 all do (most 1), the second's two of three (most 2).
  CHECK(split_batch({{3, 1, 1}, {3, 1, 1}}, 7) == std::vector<std::int64_t>{1, 2});
}
