// The bytes that cross between the processes of a multi-process run (executor/mpi/processes.hpp):
// a Writer appends plain values, vectors and strings, a Reader takes them back in order; a run's
// request (the backend, the schedule, the settings and each kill's plan) is written and read by
// encode_run and decode_run. Both ends are the same program, so plain values are copied as they
// lie in memory; schedules go as their JSON (planner/language/schedule_io.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "executor/runtime.hpp"
#include "planner/language/schedule.hpp"

namespace recycle::executor {

/// Appends values to a message.
class Writer {
 public:
  template <class T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    append(&value, sizeof(T));
  }
  template <class T>
  void put_vector(const std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>);
    put(static_cast<std::uint64_t>(values.size()));
    append(values.data(), values.size() * sizeof(T));
  }
  void put_string(const std::string& text) {
    put_vector(std::vector<char>(text.begin(), text.end()));
  }
  [[nodiscard]] std::vector<char>& bytes() noexcept { return bytes_; }

 private:
  void append(const void* data, std::size_t n) {
    if (n == 0) return;  // an empty vector's data() may be null
    const auto* p = static_cast<const char*>(data);
    bytes_.insert(bytes_.end(), p, p + n);
  }
  std::vector<char> bytes_;
};

/// Takes a message's values back in the order they were put; a message shorter than what it
/// says it holds is a programmer error (both ends run the same code).
class Reader {
 public:
  explicit Reader(const std::vector<char>& bytes) : bytes_(bytes) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    take(&value, sizeof(T));
    return value;
  }
  template <class T>
  std::vector<T> get_vector() {
    const auto n = get<std::uint64_t>();
    RECYCLE_ASSERT(n <= (bytes_.size() - at_) / std::max<std::size_t>(sizeof(T), 1),
                   "a message shorter than what it says it holds");
    std::vector<T> values(n);
    take(values.data(), n * sizeof(T));
    return values;
  }
  std::string get_string() {
    const auto chars = get_vector<char>();
    return {chars.begin(), chars.end()};
  }

 private:
  void take(void* out, std::size_t n) {
    RECYCLE_ASSERT(at_ + n <= bytes_.size(), "a message shorter than what it says it holds");
    if (n != 0) std::memcpy(out, bytes_.data() + at_, n);
    at_ += n;
  }
  const std::vector<char>& bytes_;
  std::size_t at_ = 0;
};

/// A run as process 0 asks the others for it.
struct RunRequest {
  std::int32_t backend = 0;
  planner::Schedule schedule;
  RunConfig config;
};

[[nodiscard]] std::vector<char> encode_run(std::int32_t backend, const planner::Schedule& schedule,
                                           const RunConfig& config);
/// InputError naming process 0's schedule when a schedule does not read back.
[[nodiscard]] RunRequest decode_run(const std::vector<char>& bytes);

}  // namespace recycle::executor
