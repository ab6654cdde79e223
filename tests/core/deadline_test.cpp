#include "core/deadline.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

TEST_CASE("run_until hands back what the child computed, however large") {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  const auto out = recycle::run_until([] { return std::string(1 << 20, 'x') + "end"; }, deadline);
  REQUIRE(out.has_value());
  CHECK(out->size() == (1u << 20) + 3);
  CHECK(out->substr(out->size() - 3) == "end");
}

TEST_CASE("run_until kills work that never ends at the deadline") {
  const auto started = Clock::now();
  const auto out = recycle::run_until(
      [] {
        std::atomic<std::uint64_t> spins{0};
        while (true) spins.fetch_add(1, std::memory_order_relaxed);
        return std::string("never");
      },
      started + std::chrono::milliseconds(300));
  CHECK_FALSE(out.has_value());
  // Killed at the deadline, not run to completion: the call returns (the loop above never ends).
  const auto took = Clock::now() - started;
  CHECK(took >= std::chrono::milliseconds(300));
  CHECK(took < std::chrono::seconds(5));  // the kill is at the deadline, not seconds later
}

TEST_CASE("run_until reports work that throws as not done, and the parent goes on") {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  CHECK_FALSE(recycle::run_until([]() -> std::string { throw std::runtime_error("no"); }, deadline)
                  .has_value());
  CHECK(recycle::run_until([] { return std::string(); }, deadline) == std::string());
}
