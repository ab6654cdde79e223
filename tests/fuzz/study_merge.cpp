// `recycle study merge`: the shards of a study (CSV with a two-line preamble). A form feed in the
// input splits it into two files, so the checks across files (the same study, a row in both) are
// fuzzed too.
#include <string>
#include <utility>
#include <vector>

#include "sim/replay/study.hpp"
#include "tests/fuzz/fuzz.hpp"

namespace {

void read(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> files;
  const auto split = text.find('\f');
  if (split == std::string::npos) {
    files.emplace_back("fuzz.csv", text);
  } else {
    files.emplace_back("a.csv", text.substr(0, split));
    files.emplace_back("b.csv", text.substr(split + 1));
  }
  static_cast<void>(recycle::sim::merge_study(files));
}

}  // namespace

RECYCLE_FUZZ_READER(read)
