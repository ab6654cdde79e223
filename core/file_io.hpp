// Reading and writing whole files. Reads turn every failure into an InputError naming the file;
// writes go to a temporary file renamed into place only when complete, so a failed command never
// leaves a half-written output behind.
#pragma once

#include <string>

namespace recycle {

/// Reads a whole text file. Rejects missing files, directories, and binary content (NUL bytes).
[[nodiscard]] std::string read_text_file(const std::string& path);

/// Writes `content` to `path` atomically (temporary file + rename). "-" writes to stdout.
void write_text_file(const std::string& path, const std::string& content);

/// Fails before any work when `path` cannot be written (its directory is missing), naming `flag`,
/// so a command does not compute for nothing. "" and "-" pass.
void check_writable(const std::string& path, const std::string& flag);

}  // namespace recycle
