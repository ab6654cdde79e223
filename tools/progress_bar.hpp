// A progress bar on stderr for a command that may run for more than a second (`replay`,
// `configure`): drawn only after a second and only on a terminal, erased when done.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

namespace recycle::tools {

class ProgressBar {
 public:
  ProgressBar(std::string label, bool enabled)
      : label_(std::move(label)),
        enabled_(enabled && isatty(STDERR_FILENO) != 0),
        start_(std::chrono::steady_clock::now()) {}
  ~ProgressBar() {
    if (drawn_) std::fputs("\r\033[K", stderr);
  }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  /// `done`: the fraction of the work done, 0..1.
  void operator()(double done) {
    if (!enabled_) return;
    if (std::chrono::steady_clock::now() - start_ < std::chrono::seconds(1)) return;
    const int filled = static_cast<int>(done * 30);
    std::fprintf(stderr, "\r%s [%-30s] %3d%%", label_.c_str(),
                 std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 static_cast<int>(done * 100));
    drawn_ = true;
  }

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace recycle::tools
