// Activation bytes per layer (profiles/activations.hpp) against Korthikanti et al.'s formulas
// (MLSys '23, Table 2) for GPT shapes, and by hand for a Llama.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "profiles/activations.hpp"
#include "profiles/model_spec.hpp"
#include "test_helpers.hpp"

using recycle::profiles::testing::shipped;

using namespace recycle::profiles;

TEST_CASE("activation bytes: Korthikanti et al.'s formula for each mode (GPT-3 175B, t = 8)") {
  const ModelSpec m = shipped("gpt3-175b");
  const std::int64_t s = 2048, b = 2, h = 12288, a = 96, t = 8;
  REQUIRE(m.sequence_length == s);
  const std::int64_t sbh = s * b * h;
  const std::int64_t core = 5 * a * s * s * b;  // 5 a s^2 b
  const auto bytes = [&](std::int64_t tp, bool sp, Recompute r) {
    return layer_activation_bytes(
        m, {.microbatch_size = b, .tensor_parallel = tp, .sequence_parallel = sp, .recompute = r});
  };
  // No parallelism: sbh (34 + 5 a s / h).
  CHECK(bytes(1, false, Recompute::kNone) == 34 * sbh + core);
  // Tensor parallel: sbh (10 + 24 / t + 5 a s / (h t)).
  CHECK(bytes(t, false, Recompute::kNone) == 10 * sbh + 24 * sbh / t + core / t);
  // Tensor and sequence parallel: sbh / t (34 + 5 a s / h).
  CHECK(bytes(t, true, Recompute::kNone) == (34 * sbh + core) / t);
  // Tensor parallel with selective recomputation: sbh (10 + 24 / t).
  CHECK(bytes(t, false, Recompute::kSelective) == 10 * sbh + 24 * sbh / t);
  // Tensor and sequence parallel with selective recomputation: 34 sbh / t.
  CHECK(bytes(t, true, Recompute::kSelective) == 34 * sbh / t);
  // Full recomputation: the layer's input, 2 sbh (split by t with sequence parallelism).
  CHECK(bytes(t, false, Recompute::kFull) == 2 * sbh);
  CHECK(bytes(t, true, Recompute::kFull) == 2 * sbh / t);
  // Flash attention keeps no s^2 terms, as selective recomputation.
  CHECK(layer_activation_bytes(m, {.microbatch_size = b,
                                   .tensor_parallel = t,
                                   .sequence_parallel = true,
                                   .flash_attention = true}) == 34 * sbh / t);
}

TEST_CASE("activation bytes: Llama 3 8B by hand (no dropout, SwiGLU, 8 key/value heads)") {
  // s = 8192, b = 1: norms 2 x 2sbh, QKV input 2sbh, MLP input 2sbh; Q 2sbq and K, V 2sb kv each
  // with q = 4096, kv = 1024; output projection input 2sbq; gate and up outputs 4sbf and the
  // product 2sbf, f = 14336; softmax output 2 a s^2 b, a = 32; no masks.
  const ModelSpec m = shipped("llama3-8b");
  const std::int64_t s = 8192, h = 4096, q = 4096, kv = 1024, f = 14336, a = 32;
  const std::int64_t expected =
      s * (4 * h + 2 * h + 2 * h) + s * (2 * q + 4 * kv + 2 * q + 6 * f) + 2 * a * s * s;
  CHECK(layer_activation_bytes(m, {}) == expected);
}
