#include "core/file_io.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include <spdlog/spdlog.h>

#include "core/error.hpp"

namespace recycle {

namespace {

/// Set by guard_standard_streams when the caller closed standard output.
bool stdout_closed = false;

/// "1 GiB" for a whole number of GiB, else "N bytes".
std::string describe_bytes(std::size_t bytes) {
  constexpr std::size_t kGiB = std::size_t{1} << 30;
  if (bytes >= kGiB && bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

void require_readable_size(const std::string& content, const std::string& path,
                           std::size_t max_bytes) {
  if (content.size() <= max_bytes) return;
  throw InputError(path, "would take " + std::to_string(content.size()) + " bytes, more than the " +
                             describe_bytes(max_bytes) +
                             " a text file may hold, so it would not "
                             "read back");
}

std::string read_text_file(const std::string& path, std::size_t max_bytes) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(path, "no such file");
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path, "is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open for reading");
  // Chunk by chunk, so that an endless or binary stream (/dev/zero, /dev/urandom) is refused at
  // its first NUL byte or at the cap, not after it has filled the memory.
  std::string content;
  std::vector<char> chunk(std::size_t{1} << 16);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    if (const void* nul = std::memchr(chunk.data(), '\0', got)) {
      const auto before = static_cast<const char*>(nul) - chunk.data();
      const auto line = 1 + std::count(content.begin(), content.end(), '\n') +
                        std::count(chunk.data(), chunk.data() + before, '\n');
      throw InputError(path + ":" + std::to_string(line),
                       "binary content (NUL byte), expected a text file");
    }
    if (got > max_bytes - content.size()) {
      throw InputError(path, "larger than " + describe_bytes(max_bytes) +
                                 ", the most a text file may hold (is it the right file?)");
    }
    content.append(chunk.data(), got);
  }
  if (in.bad()) throw InputError(path, "read error");
  note_input(path);
  return content;
}

namespace {

/// The temporary files of the open transaction, for the handler of the signals that end the
/// process (SIGINT, SIGTERM, SIGHUP) to remove before it dies: each slot holds a name or null.
/// Slots are claimed by compare-exchange, so that any thread may list a file, and are read by the
/// handler on whichever thread the signal reaches; every access is sequentially consistent (see
/// ListedTmp::unlist).
constexpr std::size_t kTmpSlots = 64;
std::array<std::atomic<const char*>, kTmpSlots> g_tmp_files{};
/// Handlers started: never decremented, as each ends the process.
std::atomic<int> g_handlers_started{0};
static_assert(std::atomic<const char*>::is_always_lock_free &&
                  std::atomic<int>::is_always_lock_free,
              "the signal handler may only touch lock-free atomics");

constexpr std::array<int, 3> kEndingSignals{SIGINT, SIGTERM, SIGHUP};

/// Removes the listed temporary files, then dies by `sig` (the default action, once the handler
/// returns: an exit status of 128 + sig to a shell). Only async-signal-safe calls.
void remove_tmp_files_and_die(int sig) {
  g_handlers_started.fetch_add(1);
  for (const std::atomic<const char*>& slot : g_tmp_files) {
    if (const char* name = slot.load(); name != nullptr) ::unlink(name);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

/// A temporary file's name in g_tmp_files, from before the file is created until after it was
/// renamed or removed (the destructor). The name is on the heap, where moving does not move it.
class ListedTmp {
 public:
  ListedTmp() = default;
  explicit ListedTmp(const std::string& tmp) : name_(std::make_unique<std::string>(tmp)) {
    for (slot_ = 0; slot_ < kTmpSlots; ++slot_) {
      const char* empty = nullptr;
      if (g_tmp_files[slot_].compare_exchange_strong(empty, name_->c_str())) return;
    }
    RECYCLE_ASSERT(false, "at most 64 temporary files at once");
  }
  ListedTmp(ListedTmp&& other) noexcept : name_(std::move(other.name_)), slot_(other.slot_) {}
  ListedTmp& operator=(ListedTmp&& other) noexcept {
    if (this != &other) {
      unlist();
      name_ = std::move(other.name_);
      slot_ = other.slot_;
    }
    return *this;
  }
  ListedTmp(const ListedTmp&) = delete;
  ListedTmp& operator=(const ListedTmp&) = delete;
  ~ListedTmp() { unlist(); }

 private:
  /// Empties the slot, then frees the name unless a handler has started: one that read the name
  /// before the slot was emptied may still be removing the file (the handler counts itself before
  /// it reads a slot, and this empties the slot before it reads the count, so one of the two sees
  /// the other). The process is then ending, and the name is left to it.
  void unlist() noexcept {
    if (!name_) return;
    g_tmp_files[slot_].store(nullptr);
    if (g_handlers_started.load() != 0) {
      (void)name_.release();
      return;
    }
    name_.reset();
  }

  std::unique_ptr<std::string> name_;
  std::size_t slot_ = 0;
};

/// A file written but not yet in place: `tmp` holds it complete (for a regular target), or
/// `content` does (for a device, FIFO or socket, written through at the end).
struct Staged {
  std::string path;    ///< as the user named it, for errors
  std::string target;  ///< the file replaced: `path`, or what its symbolic link names
  std::string tmp;     ///< empty for a special file
  std::string content;
  ListedTmp listed{};  ///< `tmp`, inside a transaction
};

/// A file the command reads or writes, as the system names it (weakly_canonical: one name for
/// every spelling, existing or not), with what named it (a flag, or the path as given).
struct Named {
  std::filesystem::path file;
  std::string name;
};

struct Transaction {
  std::vector<Staged> staged;
  std::vector<std::string> written;  ///< log_written's messages
  std::vector<Named> outputs;        ///< check_writable's, by flag
  std::vector<Named> inputs;         ///< read_text_file's, by path
  /// What the command prints goes to `spool` (standard output's descriptor points at it) until
  /// commit() delivers it to the real standard output, kept as `stdout_fd`; null when standard
  /// output could not be spooled (it is then written through).
  std::FILE* spool = nullptr;
  int stdout_fd = -1;
  /// The dispositions of kEndingSignals found when the transaction opened, where it replaced them.
  std::array<struct sigaction, kEndingSignals.size()> previous{};
  std::array<bool, kEndingSignals.size()> caught{};
};
Transaction* current = nullptr;

/// Points the signals that end the process at remove_tmp_files_and_die, but one it ignores (as
/// under nohup): that one would not have ended it.
void catch_ending_signals(Transaction& t) {
  struct sigaction action {};
  action.sa_handler = remove_tmp_files_and_die;
  sigemptyset(&action.sa_mask);
  for (const int sig : kEndingSignals) sigaddset(&action.sa_mask, sig);
  for (std::size_t i = 0; i < kEndingSignals.size(); ++i) {
    struct sigaction found {};
    if (::sigaction(kEndingSignals[i], nullptr, &found) != 0) continue;
    if ((found.sa_flags & SA_SIGINFO) == 0 && found.sa_handler == SIG_IGN) continue;
    t.caught[i] = ::sigaction(kEndingSignals[i], &action, &t.previous[i]) == 0;
  }
}

/// Gives the signals back the dispositions catch_ending_signals found.
void release_ending_signals(Transaction& t) {
  for (std::size_t i = 0; i < kEndingSignals.size(); ++i) {
    if (t.caught[i]) ::sigaction(kEndingSignals[i], &t.previous[i], nullptr);
    t.caught[i] = false;
  }
}

/// Whether `path` is the spool standard output points at while a transaction holds it
/// (/dev/stdout, /dev/fd/1): such a path is standard output, written in program order like "-".
bool is_spooled_stdout(const std::string& path) {
  if (current == nullptr || current->spool == nullptr) return false;
  struct stat named {};
  struct stat out {};
  return ::stat(path.c_str(), &named) == 0 && ::fstat(STDOUT_FILENO, &out) == 0 &&
         named.st_dev == out.st_dev && named.st_ino == out.st_ino;
}

/// Points standard output at a temporary file for the life of the transaction.
void start_spool(Transaction& t) {
  std::cout.flush();
  std::fflush(stdout);
  std::FILE* spool = std::tmpfile();
  if (spool == nullptr) return;
  const int saved = ::dup(STDOUT_FILENO);
  if (saved < 0 || ::dup2(::fileno(spool), STDOUT_FILENO) < 0) {
    if (saved >= 0) ::close(saved);
    std::fclose(spool);
    return;
  }
  t.spool = spool;
  t.stdout_fd = saved;
}

/// Gives standard output back; with `deliver`, first copies what the command printed to it.
/// Returns the error of a failed delivery ("" when it succeeded or there was none to make).
std::string end_spool(Transaction& t, bool deliver) {
  std::cout.flush();
  std::fflush(stdout);
  std::string error;
  if (t.spool == nullptr) {
    if (deliver && std::ferror(stdout) != 0) error = "write failed";
    std::clearerr(stdout);
    return error;
  }
  if (std::ferror(stdout) != 0) error = "write failed (spooling to a temporary file)";
  std::clearerr(stdout);
  ::dup2(t.stdout_fd, STDOUT_FILENO);
  ::close(t.stdout_fd);
  if (deliver && error.empty() && stdout_closed && std::ftell(t.spool) > 0)
    error = "not open (the caller closed it), so what the command printed has nowhere to go";
  if (deliver && error.empty()) {
    std::rewind(t.spool);
    std::vector<char> chunk(std::size_t{1} << 16);
    while (error.empty()) {
      const std::size_t got = std::fread(chunk.data(), 1, chunk.size(), t.spool);
      if (got == 0) break;
      for (std::size_t done = 0; done < got && error.empty();) {
        const ssize_t n = ::write(STDOUT_FILENO, chunk.data() + done, got - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          error = std::string("write failed: ") + std::strerror(errno);
        } else {
          done += static_cast<std::size_t>(n);
        }
      }
    }
    if (error.empty() && std::ferror(t.spool) != 0) error = "write failed (reading back its spool)";
  }
  std::fclose(t.spool);
  t.spool = nullptr;
  t.stdout_fd = -1;
  return error;
}

/// The file `path` names, when it is a file one command must not both read and write or write
/// twice: not stdout, not a device, FIFO or socket (/dev/null may take every output).
std::optional<std::filesystem::path> own_file(const std::string& path) {
  if (path.empty() || path == "-" || is_spooled_stdout(path)) return std::nullopt;
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    return std::nullopt;
  std::filesystem::path file = std::filesystem::weakly_canonical(path, ec);
  if (ec) return std::nullopt;
  return file;
}

bool is_special(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  return !ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
         !std::filesystem::is_directory(status);
}

void write_through(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InputError(path, "cannot open for writing");
  out << content;
  out.flush();
  if (!out) throw InputError(path, "write failed");
}

/// Writes `content` complete next to `path` (following a symbolic link) and returns the staging.
Staged stage(const std::string& path, const std::string& content) {
  std::error_code ec;
  std::string target = path;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec))) {
    const std::filesystem::path resolved = std::filesystem::weakly_canonical(path, ec);
    if (!ec) target = resolved.string();
  }
  Staged s{path, target, target + ".tmp-recycle", {}, {}};
  if (current != nullptr) s.listed = ListedTmp(s.tmp);
  std::ofstream out(s.tmp, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(path, "cannot open for writing");
  out << content;
  out.flush();
  if (!out) {
    std::remove(s.tmp.c_str());
    throw InputError(path, "write failed");
  }
  return s;
}

void put_in_place(const Staged& s) {
  if (s.tmp.empty()) return write_through(s.path, s.content);
  std::error_code ec;
  std::filesystem::rename(s.tmp, s.target, ec);
  if (ec) {
    std::remove(s.tmp.c_str());
    throw InputError(s.path, "cannot write: " + ec.message());
  }
}

}  // namespace

void write_text_file(const std::string& path, const std::string& content) {
  if (path == "-" || is_spooled_stdout(path)) {
    std::cout << content;
    std::cout.flush();
    return;
  }
  // A device, FIFO or socket (/dev/null, /dev/stdout, a pipe) is written through: renaming a file
  // over it would replace it.
  if (is_special(path)) {
    if (!current) return write_through(path, content);
    current->staged.push_back({path, path, "", content, {}});
    return;
  }
  // An output flag naming an input is refused when checked (check_writable) or when the input is
  // read (note_input); this holds for any other path a command writes.
  if (current != nullptr) {
    if (const auto file = own_file(path)) {
      for (const Named& in : current->inputs) {
        if (in.file == *file)
          throw InputError(path, "is an input of this command too; write it elsewhere");
      }
    }
  }
  Staged s = stage(path, content);
  if (!current) return put_in_place(s);
  // Written twice in one run: the second content wins, in the first one's place.
  for (Staged& earlier : current->staged) {
    if (earlier.tmp == s.tmp) return;
  }
  current->staged.push_back(std::move(s));
}

void guard_standard_streams() {
  for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    // The lowest free number is this one: /dev/null takes it.
    const int opened = ::open("/dev/null", O_RDWR);
    if (opened >= 0 && opened != fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
    if (fd == STDOUT_FILENO) stdout_closed = true;
  }
  std::signal(SIGPIPE, SIG_IGN);
}

OutputTransaction::OutputTransaction(Stdout stdout_mode) {
  RECYCLE_ASSERT(current == nullptr, "one output transaction at a time");
  current = new Transaction;
  catch_ending_signals(*current);
  if (stdout_mode == Stdout::kHold) start_spool(*current);
}

OutputTransaction::~OutputTransaction() {
  (void)end_spool(*current, false);  // a command that failed prints nothing
  for (const Staged& s : current->staged) {
    if (!s.tmp.empty()) std::remove(s.tmp.c_str());
  }
  release_ending_signals(*current);
  delete current;  // unlists the temporary files, removed above
  current = nullptr;
}

void OutputTransaction::commit() {
  const std::vector<Staged> staged = std::move(current->staged);
  const std::vector<std::string> written = std::move(current->written);
  current->staged.clear();
  current->written.clear();
  const auto remove_staged = [&](std::size_t from) {
    for (std::size_t j = from; j < staged.size(); ++j) {
      if (!staged[j].tmp.empty()) std::remove(staged[j].tmp.c_str());
    }
  };
  // Devices, FIFOs and sockets first, then what the command printed: once one is written nothing
  // can take it back, so no file is put in place before they all are.
  for (const Staged& s : staged) {
    if (!s.tmp.empty()) continue;
    try {
      write_through(s.path, s.content);
    } catch (...) {
      remove_staged(0);
      throw;
    }
  }
  if (const std::string error = end_spool(*current, true); !error.empty()) {
    remove_staged(0);
    throw InputError("stdout", error);
  }
  // Then the files; one that cannot be renamed takes back those this commit created.
  std::vector<std::string> created;
  for (std::size_t i = 0; i < staged.size(); ++i) {
    const Staged& s = staged[i];
    if (s.tmp.empty()) continue;
    std::error_code ec;
    const bool existed = std::filesystem::exists(std::filesystem::symlink_status(s.target, ec));
    try {
      put_in_place(s);
    } catch (...) {
      remove_staged(i + 1);
      for (const std::string& path : created) std::remove(path.c_str());
      throw;
    }
    if (!existed) created.push_back(s.target);
  }
  for (const std::string& message : written) spdlog::info("{}", message);
}

void log_written(std::string message) {
  if (current) {
    current->written.push_back(std::move(message));
    return;
  }
  spdlog::info("{}", message);
}

}  // namespace recycle

namespace recycle {

void note_input(const std::string& path) {
  if (current == nullptr) return;
  const auto file = own_file(path);
  if (!file) return;
  for (const Named& out : current->outputs) {
    if (out.file == *file) {
      throw InputError(out.name, path +
                                     " is an input of this command too; write the output "
                                     "elsewhere");
    }
  }
  current->inputs.push_back({*file, path});
}

void check_writable(const std::string& path, const std::string& flag) {
  if (path.empty() || path == "-") return;
  if (current != nullptr) {
    if (const auto file = own_file(path)) {
      for (const Named& in : current->inputs) {
        if (in.file == *file)
          throw InputError(flag, path + " is an input of this command too; write it elsewhere");
      }
      for (const Named& out : current->outputs) {
        if (out.file == *file) {
          throw InputError(flag, path + " is also the file of " + out.name +
                                     "; each output needs a file of its own");
        }
      }
      current->outputs.push_back({*file, flag});
    }
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
    throw InputError(flag,
                     path + ": cannot open for writing (no directory " + parent.string() + ")");
  }
  if (std::filesystem::is_directory(path, ec))
    throw InputError(flag, path + ": cannot open for writing (a directory)");
}

}  // namespace recycle
