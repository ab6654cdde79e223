#include "core/error.hpp"

#include <cstdio>
#include <cstdlib>

namespace recycle {

namespace {
std::string join(const std::string& where, const std::string& problem) {
  return where.empty() ? problem : where + ": " + problem;
}
}  // namespace

InputError::InputError(std::string where, std::string problem)
    : std::runtime_error(join(where, problem)),
      where_(std::move(where)),
      problem_(std::move(problem)) {}

void assertion_failed(const char* expr, const char* file, int line, const std::string& why) {
  std::fprintf(stderr, "internal error: %s:%d: assertion `%s` failed: %s\n", file, line, expr,
               why.c_str());
  std::abort();
}

}  // namespace recycle
