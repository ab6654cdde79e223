// Reading and writing whole files. Reads turn every failure into an InputError naming the file;
// writes go to a temporary file renamed into place only when complete, so a failed command never
// leaves a half-written output behind; inside an OutputTransaction, a failed command leaves none
// of its outputs at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace recycle {

/// The most read_text_file reads by default: 1 GiB, far above any schedule, profile, job or trace
/// the tool reads (the largest are a few hundred MB), so that an endless stream is refused.
inline constexpr std::size_t kMaxTextFileBytes = std::size_t{1} << 30;

/// Reads a whole text file: a regular file, or a pipe (`<(cat file)`, /dev/stdin). Rejects missing
/// files, directories, binary content (at the first NUL byte, naming its line) and content over
/// `max_bytes` (naming the cap), reading chunk by chunk so that neither check waits for the end
/// of an endless stream (/dev/zero, /dev/urandom).
[[nodiscard]] std::string read_text_file(const std::string& path,
                                         std::size_t max_bytes = kMaxTextFileBytes);

/// Refuses (InputError naming `path`) content that read_text_file with `max_bytes` would refuse
/// for its size: what a command writes for the tool to read again must read back.
void require_readable_size(const std::string& content, const std::string& path,
                           std::size_t max_bytes = kMaxTextFileBytes);

/// Writes `content` to `path` atomically (temporary file + rename). "-" writes to stdout. A
/// device, FIFO or socket is written through; a symbolic link is followed. Inside an
/// OutputTransaction the file is staged and put in place by commit().
void write_text_file(const std::string& path, const std::string& content);

/// Call first in main. Standard input, output or error that the caller closed is opened on
/// /dev/null, so that no file the program opens takes its number; printing to a closed standard
/// output is then the error commit() reports ("stdout: not open"), not output lost without a
/// word. SIGPIPE is ignored: a reader that closes the pipe early makes the write fail, reported
/// the same way ("stdout: write failed: Broken pipe", exit 2), not a death by signal.
void guard_standard_streams();

/// All or nothing for the files one command writes: while a transaction is alive, each
/// write_text_file (but to stdout) is staged as a complete temporary file next to its target, and
/// with Stdout::kHold what the command prints to standard output (printf, std::cout, "-",
/// /dev/stdout) is spooled to an unnamed temporary file; commit() puts them all in place, and a
/// transaction ended without commit() (the command failed) removes them and prints nothing, so no
/// earlier output of a failed run is left behind: its one line is the error. While it is alive,
/// SIGINT, SIGTERM and SIGHUP (but one the process ignores) remove the staged files, then end the
/// process by the same signal; the destructor gives them back their earlier dispositions. One at a
/// time.
class OutputTransaction {
 public:
  /// Whether standard output is held until commit() (the program's commands) or written as the
  /// caller goes (a test whose framework reports on standard output).
  enum class Stdout : std::uint8_t { kWriteThrough, kHold };

  explicit OutputTransaction(Stdout stdout_mode = Stdout::kWriteThrough);
  ~OutputTransaction();
  OutputTransaction(const OutputTransaction&) = delete;
  OutputTransaction& operator=(const OutputTransaction&) = delete;

  /// Puts every staged file in place: first the devices, FIFOs and sockets (written through, which
  /// cannot be undone, and is what fails on a full device), then what was printed (InputError
  /// naming stdout when it cannot be written), then the files, renamed in the order written.
  /// InputError naming the first that cannot be written: no file is then left in place (but one
  /// that replaced an existing file before a rename failed). Then logs what log_written() queued.
  void commit();
};

/// Logs `message` (info) once the outputs are in place, as "wrote FILE ..." must only be said of
/// a file written: at commit() inside an OutputTransaction (never, if the command fails), else
/// now.
void log_written(std::string message);

/// Fails before any work when `path` cannot be written (its directory is missing), naming `flag`,
/// so a command does not compute for nothing. "" and "-" pass. Inside an OutputTransaction it also
/// refuses a file another output flag of the command names, or one the command has read
/// (read_text_file): a second output would silently replace the first, an output its input.
/// Devices, FIFOs and sockets (/dev/null) may take any number of outputs.
void check_writable(const std::string& path, const std::string& flag);

/// Inside an OutputTransaction: records `path` as read by the command, refused (InputError naming
/// the output's flag) when an output flag checked before names the same file. read_text_file calls
/// it; readers that open files themselves call it too.
void note_input(const std::string& path);

}  // namespace recycle
