// Work that must end by a deadline even when the code doing it never looks at the clock (a
// solver's root LP, say): it runs in a child process, which is killed at the deadline. The child
// hands back its result as bytes through a pipe.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace recycle {

/// Runs `work` in a forked child and returns the bytes it produced, or nullopt if it did not
/// finish by `deadline` (it is then killed) or died. `work` runs in a copy of this process with
/// one thread: it must not wait for other threads, nor write to files the parent writes.
[[nodiscard]] std::optional<std::string> run_until(const std::function<std::string()>& work,
                                                   std::chrono::steady_clock::time_point deadline);

}  // namespace recycle
