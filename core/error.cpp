#include "core/error.hpp"

#include <cstdio>
#include <cstdlib>

namespace recycle {

namespace {
std::string join(const std::string& where, const std::string& problem) {
  return where.empty() ? problem : where + ": " + problem;
}

void append_escaped(std::string& out, unsigned char byte) {
  char escaped[5];
  std::snprintf(escaped, sizeof escaped, "\\x%02X", byte);
  out += escaped;
}
}  // namespace

InputError::InputError(std::string where, std::string problem)
    : std::runtime_error(join(where, problem)),
      where_(std::move(where)),
      problem_(std::move(problem)) {}

std::string shown(std::string_view text) {
  constexpr std::size_t kMaxShown = 40;
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte < 0x7f) {
      out += static_cast<char>(byte);
      continue;
    }
    append_escaped(out, byte);
  }
  if (text.size() > kMaxShown) out += "...";
  return out;
}

std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      append_escaped(out, byte);
    } else {
      out += c;
    }
  }
  return out;
}

void assertion_failed(const char* expr, const char* file, int line, const std::string& why) {
  std::fprintf(stderr, "internal error: %s:%d: assertion `%s` failed: %s\n", file, line, expr,
               why.c_str());
  std::abort();
}

}  // namespace recycle
