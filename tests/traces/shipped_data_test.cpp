// The traces shipped in traces/data are what traces/data/regenerate.sh makes: the generator's
// output for each preset with seed 1. A change to the generator must come with regenerated files.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "core/file_io.hpp"
#include "traces/generator.hpp"
#include "traces/native_csv.hpp"
#include "traces/presets.hpp"

namespace recycle::traces {
namespace {

TEST_CASE("every preset's shipped trace is up to date, small, and reads back") {
  for (const GeneratorPreset& preset : generator_presets()) {
    const std::string path =
        std::string(RECYCLE_SOURCE_DIR) + "/traces/data/" + std::string(preset.name) + ".csv";
    CAPTURE(path);
    GeneratorOptions options = preset.options;
    options.seed = 1;
    const std::string shipped = read_text_file(path);
    CHECK(shipped == format_native_csv(generate_trace(options)));
    CHECK(std::filesystem::file_size(path) < 200'000);
    CHECK(read_native_csv(path, {}).trace.node_count() == options.nodes);
  }
}

}  // namespace
}  // namespace recycle::traces
