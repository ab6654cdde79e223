#include "core/file_io.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <system_error>
#include <vector>

#include "core/error.hpp"

namespace recycle {

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(path, "no such file");
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path, "is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open for reading");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw InputError(path, "read error");
  std::string content = std::move(buffer).str();
  if (const auto nul = content.find('\0'); nul != std::string::npos) {
    const auto line =
        1 + std::count(content.begin(), content.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
    throw InputError(path + ":" + std::to_string(line),
                     "binary content (NUL byte), expected a text file");
  }
  return content;
}

namespace {

/// A file written but not yet in place: `tmp` holds it complete (for a regular target), or
/// `content` does (for a device, FIFO or socket, written through at the end).
struct Staged {
  std::string path;    ///< as the user named it, for errors
  std::string target;  ///< the file replaced: `path`, or what its symbolic link names
  std::string tmp;     ///< empty for a special file
  std::string content;
};

struct Transaction {
  std::vector<Staged> staged;
};
Transaction* current = nullptr;

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
  Staged s{path, target, target + ".tmp-recycle", {}};
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
  if (path == "-") {
    std::cout << content;
    std::cout.flush();
    return;
  }
  // A device, FIFO or socket (/dev/null, /dev/stdout, a pipe) is written through: renaming a file
  // over it would replace it.
  if (is_special(path)) {
    if (!current) return write_through(path, content);
    current->staged.push_back({path, path, "", content});
    return;
  }
  Staged s = stage(path, content);
  if (!current) return put_in_place(s);
  // Written twice in one run: the second content wins, in the first one's place.
  for (Staged& earlier : current->staged) {
    if (earlier.tmp == s.tmp) return;
  }
  current->staged.push_back(std::move(s));
}

OutputTransaction::OutputTransaction() {
  RECYCLE_ASSERT(current == nullptr, "one output transaction at a time");
  current = new Transaction;
}

OutputTransaction::~OutputTransaction() {
  for (const Staged& s : current->staged) {
    if (!s.tmp.empty()) std::remove(s.tmp.c_str());
  }
  delete current;
  current = nullptr;
}

void OutputTransaction::commit() {
  std::vector<Staged> staged = std::move(current->staged);
  current->staged.clear();
  for (std::size_t i = 0; i < staged.size(); ++i) {
    try {
      put_in_place(staged[i]);
    } catch (...) {
      for (std::size_t j = i + 1; j < staged.size(); ++j) {
        if (!staged[j].tmp.empty()) std::remove(staged[j].tmp.c_str());
      }
      throw;
    }
  }
}

}  // namespace recycle

namespace recycle {

void check_writable(const std::string& path, const std::string& flag) {
  if (path.empty() || path == "-") return;
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
