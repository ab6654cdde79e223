#include "core/deadline.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "core/error.hpp"

namespace recycle {

namespace {

/// Writes all of `bytes` to `fd`; false if the reader went away.
bool write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

std::optional<std::string> run_until(const std::function<std::string()>& work,
                                     std::chrono::steady_clock::time_point deadline) {
  int fds[2];
  RECYCLE_ASSERT(::pipe(fds) == 0, "pipe() failed");
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t child = ::fork();
  RECYCLE_ASSERT(child >= 0, "fork() failed");
  if (child == 0) {
    ::close(fds[0]);
    int status = 1;
    try {
      status = write_all(fds[1], work()) ? 0 : 1;
    } catch (...) {
      status = 1;
    }
    ::_exit(status);  // no atexit handlers, no flushing of the parent's buffers
  }
  ::close(fds[1]);
  std::string out;
  bool finished = false;
  char buffer[1 << 16];
  while (true) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      finished = true;  // end of file: the child wrote everything or died
      break;
    }
    out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (!finished) ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!finished || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

}  // namespace recycle
