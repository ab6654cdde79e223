// One libFuzzer target per reader (tests/fuzz/*.cpp, built with -DRECYCLE_FUZZ=ON and clang, run by
// `make fuzz`). A reader may refuse any input with an InputError; anything else (an assertion, an
// uncaught exception, a sanitizer report, a hang) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"

/// Runs `read(text)` on the fuzzer's bytes, accepting an InputError as a clean refusal.
#define RECYCLE_FUZZ_READER(read)                                                  \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t n) { \
    const std::string text(reinterpret_cast<const char*>(data), n);                \
    try {                                                                          \
      read(text);                                                                  \
    } catch (const recycle::InputError&) {                                         \
    }                                                                              \
    return 0;                                                                      \
  }
