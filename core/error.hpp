// Errors. An InputError is something the user can fix: a bad flag, a malformed file, an impossible
// configuration. It names where the problem is (a flag, "file:line", "file: field.path") and what
// was expected; the command-line program prints it as one `error: WHERE: WHAT` line and exits 2.
// Programmer errors are assertions (RECYCLE_ASSERT), never InputErrors.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace recycle {

class InputError : public std::runtime_error {
 public:
  InputError(std::string where, std::string problem);

  /// Where the problem is: a flag (`--pp`), `file:line`, or `file: field.path`.
  [[nodiscard]] const std::string& where() const noexcept { return where_; }
  /// What is wrong and what was expected.
  [[nodiscard]] const std::string& problem() const noexcept { return problem_; }

 private:
  std::string where_;
  std::string problem_;
};

/// A user's text as an error message quotes it: printable ASCII as is, every other byte as \xHH,
/// cut after 40 characters with "...", so the message stays one line whatever the input holds.
[[nodiscard]] std::string shown(std::string_view text);

/// A message as one line: every control byte (a newline in a file name, say) as \xHH, as shown()
/// writes it; other bytes, UTF-8 included, as they are. Every `error:` line goes through it.
[[nodiscard]] std::string one_line(std::string_view text);

[[noreturn]] void assertion_failed(const char* expr, const char* file, int line,
                                   const std::string& why);

}  // namespace recycle

#define RECYCLE_ASSERT(cond, why)                                             \
  do {                                                                        \
    if (!(cond)) ::recycle::assertion_failed(#cond, __FILE__, __LINE__, why); \
  } while (false)
