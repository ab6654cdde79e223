// FLOP counts (profiles/flops.hpp) against Narayanan et al.'s closed forms (SC '21, section 5.1)
// and hand counts.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "profiles/flops.hpp"
#include "profiles/model_spec.hpp"
#include "test_helpers.hpp"

using recycle::profiles::testing::shipped;

using namespace recycle::profiles;

TEST_CASE("training FLOPs: Narayanan et al.'s closed forms for the GPT models") {
  // Per iteration of B samples: with full recomputation
  //   F = 96 B s l h^2 (1 + s / (6h) + V / (16 l h)) = 96 B s l h^2 + 16 B s^2 l h + 6 B s h V,
  // without it three passes instead of four:
  //   72 B s l h^2 (1 + s / (6h) + V / (12 l h)) = 72 B s l h^2 + 12 B s^2 l h + 6 B s h V.
  for (const char* name :
       {"gpt3-350m", "gpt3-1.3b", "gpt3-2.7b", "gpt3-6.7b", "gpt3-13b", "gpt3-175b"}) {
    CAPTURE(name);
    const ModelSpec m = shipped(name);
    const std::int64_t b = 8, s = m.sequence_length, l = m.layers, h = m.hidden, v = m.vocab_size;
    CHECK(training_flops(m, b, Recompute::kFull) ==
          96 * b * s * l * h * h + 16 * b * s * s * l * h + 6 * b * s * h * v);
    CHECK(training_flops(m, b, Recompute::kNone) ==
          72 * b * s * l * h * h + 12 * b * s * s * l * h + 6 * b * s * h * v);
    // Selective recomputation runs the attention core again: 4 B s^2 h per layer.
    CHECK(training_flops(m, b, Recompute::kSelective) ==
          training_flops(m, b, Recompute::kNone) + 4 * b * s * s * l * h);
  }
}

TEST_CASE("layer FLOPs with grouped-query attention and a gated MLP, by hand") {
  // Llama 3 8B, s 8192: projections 2 s h (q + 2 kv) + 2 s q h with h = q = 4096, kv = 1024;
  // attention core 4 s^2 q; MLP 2 s x 3 x 4096 x 14336.
  const ModelSpec m = shipped("llama3-8b");
  const std::int64_t s = 8192;
  const std::int64_t expected = 2 * s * 4096 * (4096 + 2 * 1024) + 2 * s * 4096 * 4096 +
                                4 * s * s * 4096 + 2 * s * 3 * 4096LL * 14336;
  CHECK(layer_forward_flops(m) == expected);
  CHECK(logit_forward_flops(m) == 2 * s * 4096 * 128'256LL);
}
