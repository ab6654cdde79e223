#include "tools/workload_options.hpp"
#include "tools/whole_range.hpp"

#include <string>

namespace recycle::tools {

void add_shape_options(CLI::App& app, executor::StageShape& shape) {
  app.add_option("--width", shape.width,
                 "Features per layer (default " + std::to_string(shape.width) + ")")
      ->check(whole_range(1, 16384));
  app.add_option("--layers-per-stage", shape.layers, "Layers per stage (default 2)")
      ->check(whole_range(1, 1024));
  app.add_option("--microbatch-size", shape.microbatch_size, "Samples per micro-batch (default 32)")
      ->check(whole_range(1, 65536));
  app.add_option_function<std::string>(
         "--block",
         [&shape](const std::string& block) {
           shape.block = block == "dense" ? executor::Block::kDense : executor::Block::kTransformer;
           shape.style =
               block == "llama" ? executor::transformer::kLlama : executor::transformer::Style{};
         },
         "Layer kind: dense (tanh(x W + b), default), transformer (pre-norm GPT block: "
         "causal multi-head attention and a 4x GELU MLP, layer norms, biases) or llama (the "
         "same with RMSNorm, a SwiGLU MLP of 4x, rotary positions and no biases)")
      ->check(CLI::IsMember({"dense", "transformer", "llama"}));
  auto* sequence =
      app.add_option("--sequence", shape.sequence, "Transformer: tokens per sample (default 32)")
          ->check(whole_range(1, 65536));
  auto* heads = app.add_option("--heads", shape.heads,
                               "Transformer: attention heads, dividing --width (default 4)")
                    ->check(whole_range(1, 16384));
  auto* kv_heads = app.add_option("--kv-heads", shape.kv_heads,
                                  "Transformer: key/value heads (grouped-query attention), "
                                  "dividing --heads (default: --heads)")
                       ->check(whole_range(1, 16384));
  // A transformer flag given for dense layers would be silently ignored: refused instead.
  app.final_callback([&shape, sequence, heads, kv_heads] {
    if (shape.block != executor::Block::kDense) return;
    for (const CLI::Option* given : {sequence, heads, kv_heads}) {
      if (given->count() > 0) {
        throw CLI::ValidationError(
            given->get_name(), "shapes transformer blocks only; give --block transformer or llama");
      }
    }
  });
}

void add_repetitions_option(CLI::App& app, std::int32_t& repetitions) {
  app.add_option("--repetitions", repetitions,
                 "Timed runs of each operation for the measured costs; the median is kept "
                 "(default 20)")
      ->check(whole_range(1, 100000));
}

}  // namespace recycle::tools
