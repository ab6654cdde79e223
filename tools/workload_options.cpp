#include "tools/workload_options.hpp"

namespace recycle::tools {

void add_shape_options(CLI::App& app, executor::StageShape& shape) {
  app.add_option("--width", shape.width, "Features per layer (default 256)")
      ->check(CLI::Range(1, 16384));
  app.add_option("--layers-per-stage", shape.layers, "Dense layers per stage (default 2)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--microbatch-size", shape.microbatch_size, "Samples per micro-batch (default 32)")
      ->check(CLI::Range(1, 65536));
}

void add_repetitions_option(CLI::App& app, std::int32_t& repetitions) {
  app.add_option("--repetitions", repetitions,
                 "Timed runs of each operation for the measured costs; the median is kept "
                 "(default 20)")
      ->check(CLI::Range(1, 100000));
}

}  // namespace recycle::tools
