// The all-reduce by message (what ranks in several processes run) against the in-process one:
// the same sums, bit for bit, round after round; a rank whose vector differs in size is an error;
// an abort wakes a rank waiting for its peers.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "executor/channels.hpp"
#include "executor/message_reduce.hpp"

namespace recycle::executor {

namespace {

/// Runs `rounds` all-reduces of `data` (one vector per rank) by message, a thread per rank, each
/// rank's mailbox local; returns each rank's error text ("" when none).
std::vector<std::string> message_reduce_on_threads(std::vector<std::vector<float>>& data,
                                                   int rounds, Abort& abort) {
  std::vector<std::unique_ptr<Mailbox<>>> boxes;
  for (std::size_t r = 0; r < data.size(); ++r) boxes.push_back(std::make_unique<Mailbox<>>(abort));
  const MessageReduce reduce(
      data.size(), 7,
      [&](std::size_t to, const MessageKey& key, std::vector<float> d) {
        boxes[to]->deliver(key, std::move(d));
      },
      [&](std::size_t rank) -> Mailbox<>& { return *boxes[rank]; });
  std::vector<std::string> errors(data.size());
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < data.size(); ++r) {
    threads.emplace_back([&, r] {
      try {
        for (int i = 0; i < rounds; ++i) reduce.all_reduce(r, data[r], i, "the test's all-reduce");
      } catch (const std::exception& e) {
        errors[r] = e.what();
        abort.raise(e.what());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return errors;
}

void shared_reduce_on_threads(std::vector<std::vector<float>>& data, int rounds) {
  Abort abort(std::chrono::milliseconds(10'000));
  AllReduceGroup<> group(static_cast<std::int32_t>(data.size()), abort);
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < data.size(); ++r) {
    threads.emplace_back([&, r] {
      for (int i = 0; i < rounds; ++i)
        group.all_reduce(static_cast<std::int32_t>(r), data[r], "the test's all-reduce");
    });
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace

TEST_CASE("all-reduce by message: the in-process sums, bit for bit, for any ranks and sizes") {
  std::mt19937 random(5);
  // Values over many magnitudes and both signs: float sums in another order would differ.
  std::uniform_real_distribution<float> mantissa(-1.0F, 1.0F);
  std::uniform_int_distribution<int> exponent(-20, 20);
  for (std::size_t ranks = 1; ranks <= 5; ++ranks) {
    for (const std::size_t size : {0, 1, 2, 7, 33}) {
      CAPTURE(ranks);
      CAPTURE(size);
      std::vector<std::vector<float>> data(ranks, std::vector<float>(size));
      for (auto& d : data) {
        for (float& x : d) x = std::ldexp(mantissa(random), exponent(random));
      }
      // One round's expected sum, element by element in rank order (reduce_shard's order).
      std::vector<float> expected(size);
      for (std::size_t i = 0; i < size; ++i) {
        float sum = data[0][i];
        for (std::size_t r = 1; r < ranks; ++r) sum += data[r][i];
        expected[i] = sum;
      }
      std::vector<std::vector<float>> by_message = data, shared = data, once = data;
      Abort abort(std::chrono::milliseconds(10'000));
      static_cast<void>(message_reduce_on_threads(once, 1, abort));
      for (const auto& d : once) CHECK(d == expected);
      Abort again(std::chrono::milliseconds(10'000));
      const auto errors = message_reduce_on_threads(by_message, 3, again);
      shared_reduce_on_threads(shared, 3);
      for (std::size_t r = 0; r < ranks; ++r) {
        CHECK(errors[r].empty());
        CHECK(by_message[r] == shared[r]);
      }
    }
  }
}

TEST_CASE("all-reduce by message: vectors of different sizes are an error, not a hang") {
  std::vector<std::vector<float>> data{std::vector<float>(6, 1.0F), std::vector<float>(9, 1.0F),
                                       std::vector<float>(6, 1.0F)};
  Abort abort(std::chrono::milliseconds(10'000));
  const auto start = std::chrono::steady_clock::now();
  const auto errors = message_reduce_on_threads(data, 1, abort);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  bool sized = false;
  for (const std::string& e : errors)
    sized = sized || e.find("differ in size") != std::string::npos;
  CHECK(sized);
}

TEST_CASE("all-reduce by message: an abort wakes a rank whose peers never come") {
  // Rank 1 of 2 never calls: rank 0 waits for its shard until the abort.
  Abort abort(std::chrono::milliseconds(10'000));
  Mailbox<> box(abort);
  const MessageReduce reduce(
      2, 0, [](std::size_t, const MessageKey&, std::vector<float>) {},
      [&](std::size_t) -> Mailbox<>& { return box; });
  std::vector<float> data(4, 1.0F);
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    abort.raise("a peer failed");
  });
  CHECK_THROWS_WITH_AS(reduce.all_reduce(0, data, 0, "the test's all-reduce"),
                       "stopped while waiting for the test's all-reduce", std::runtime_error);
  stopper.join();
}

}  // namespace recycle::executor
