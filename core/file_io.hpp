// Reading and writing whole files. Reads turn every failure into an InputError naming the file;
// writes go to a temporary file renamed into place only when complete, so a failed command never
// leaves a half-written output behind; inside an OutputTransaction, a failed command leaves none
// of its outputs at all.
#pragma once

#include <string>

namespace recycle {

/// Reads a whole text file. Rejects missing files, directories, and binary content (NUL bytes).
[[nodiscard]] std::string read_text_file(const std::string& path);

/// Writes `content` to `path` atomically (temporary file + rename). "-" writes to stdout. A
/// device, FIFO or socket is written through; a symbolic link is followed. Inside an
/// OutputTransaction the file is staged and put in place by commit().
void write_text_file(const std::string& path, const std::string& content);

/// All or nothing for the files one command writes: while a transaction is alive, each
/// write_text_file (but to stdout) is staged as a complete temporary file next to its target;
/// commit() puts them all in place, and a transaction ended without commit() (the command failed)
/// removes them, so no earlier output of a failed run is left behind. One at a time.
class OutputTransaction {
 public:
  OutputTransaction();
  ~OutputTransaction();
  OutputTransaction(const OutputTransaction&) = delete;
  OutputTransaction& operator=(const OutputTransaction&) = delete;

  /// Puts every staged file in place, in the order written; InputError naming the first that
  /// cannot be (the ones after it are removed).
  void commit();
};

/// Fails before any work when `path` cannot be written (its directory is missing), naming `flag`,
/// so a command does not compute for nothing. "" and "-" pass.
void check_writable(const std::string& path, const std::string& flag);

}  // namespace recycle
