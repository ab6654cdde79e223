// The cpu backend's in-process collectives: the all-reduce each rank does a share of.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "executor/channels.hpp"

namespace recycle::executor {

namespace {

/// Runs one all-reduce of `data` (one vector per rank) on a thread per rank, `rounds` times.
void all_reduce_on_threads(std::vector<std::vector<float>>& data, int rounds = 1) {
  Abort abort(std::chrono::milliseconds(10'000));
  AllReduceGroup<> group(static_cast<std::int32_t>(data.size()), abort);
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < data.size(); ++r) {
    threads.emplace_back([&, r] {
      for (int i = 0; i < rounds; ++i) {
        group.all_reduce(static_cast<std::int32_t>(r), data[r], "the test's all-reduce");
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace

TEST_CASE("all-reduce: every rank gets the sum in rank order, whatever the shard boundaries") {
  // 7 elements over 3 ranks: shards of 2, 2 and 3 elements. Element i of rank r holds a value
  // whose float sum depends on the order (1e8 + 1 - 1e8 is 0 in rank order 1e8, 1, -1e8 summed
  // left to right, 1 summed otherwise), so a shard summed in another order would show.
  std::vector<std::vector<float>> data(3, std::vector<float>(7));
  for (std::size_t i = 0; i < 7; ++i) {
    data[0][i] = 1e8F;
    data[1][i] = 1.0F + static_cast<float>(i);
    data[2][i] = -1e8F;
  }
  std::vector<float> expected(7);
  for (std::size_t i = 0; i < 7; ++i) expected[i] = (data[0][i] + data[1][i]) + data[2][i];
  all_reduce_on_threads(data);
  for (const std::vector<float>& d : data) CHECK(d == expected);
}

TEST_CASE("all-reduce: round after round, empty vectors, one rank") {
  // Two ranks holding 1 and 2 everywhere: after one round both hold 3, after two 6, after
  // three 12 (each round sums the previous round's sums).
  std::vector<std::vector<float>> data{std::vector<float>(5, 1.0F), std::vector<float>(5, 2.0F)};
  all_reduce_on_threads(data, 3);
  CHECK(data[0] == std::vector<float>(5, 12.0F));
  CHECK(data[1] == std::vector<float>(5, 12.0F));
  std::vector<std::vector<float>> empty(4);
  all_reduce_on_threads(empty, 2);  // a barrier: returns, nothing to sum
  for (const std::vector<float>& d : empty) CHECK(d.empty());
  std::vector<std::vector<float>> alone{std::vector<float>{4.0F, 5.0F}};
  all_reduce_on_threads(alone);
  CHECK(alone[0] == std::vector<float>{4.0F, 5.0F});
}

TEST_CASE("all-reduce: one rank's share reads every slot and writes only its own") {
  // Three slots of 6: shards [0, 2), [2, 4), [4, 6). Rank 1 reduces shard 1 into its own slot,
  // then (once the others have reduced theirs) gathers shards 0 and 2 from ranks 0 and 2.
  std::vector<std::vector<float>> data{{1, 1, 1, 1, 1, 1}, {2, 2, 2, 2, 2, 2}, {4, 4, 4, 4, 4, 4}};
  std::vector<std::vector<float>*> slots{&data[0], &data[1], &data[2]};
  reduce_shard(slots, 1);
  CHECK(data[1] == std::vector<float>{2, 2, 7, 7, 2, 2});
  CHECK(data[0] == std::vector<float>(6, 1));
  CHECK(data[2] == std::vector<float>(6, 4));
  reduce_shard(slots, 0);
  reduce_shard(slots, 2);
  gather_shards(slots, 1);
  CHECK(data[1] == std::vector<float>(6, 7));
  CHECK(data[0] == std::vector<float>{7, 7, 1, 1, 1, 1});  // not gathered yet
}

TEST_CASE("all-reduce: vectors of different sizes are an error on every rank, not a hang") {
  std::vector<std::vector<float>> data{std::vector<float>(4), std::vector<float>(5)};
  Abort abort(std::chrono::milliseconds(10'000));
  AllReduceGroup<> group(2, abort);
  int errors = 0;
  std::vector<std::thread> threads;
  std::mutex m;
  for (std::size_t r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      try {
        group.all_reduce(static_cast<std::int32_t>(r), data[r], "the test's all-reduce");
      } catch (const std::runtime_error&) {
        const std::lock_guard lock(m);
        ++errors;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(errors == 2);
}

}  // namespace recycle::executor
