#include "core/file_io.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <system_error>

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

void write_text_file(const std::string& path, const std::string& content) {
  if (path == "-") {
    std::cout << content;
    std::cout.flush();
    return;
  }
  std::error_code ec;
  // A device, FIFO or socket (/dev/null, /dev/stdout, a pipe) is written through: renaming a file
  // over it would replace it. A symbolic link is followed, so the file it names is replaced.
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
      !std::filesystem::is_directory(status)) {
    std::ofstream out(path, std::ios::binary);
    if (!out) throw InputError(path, "cannot open for writing");
    out << content;
    out.flush();
    if (!out) throw InputError(path, "write failed");
    return;
  }
  std::string target = path;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec))) {
    const std::filesystem::path resolved = std::filesystem::weakly_canonical(path, ec);
    if (!ec) target = resolved.string();
  }
  const std::string tmp = target + ".tmp-recycle";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, "cannot open for writing");
    out << content;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw InputError(path, "write failed");
    }
  }
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw InputError(path, "cannot write: " + ec.message());
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
