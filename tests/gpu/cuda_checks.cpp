// The cuda backend against the cpu backend, for a machine with a GPU: `recycle_cuda_checks` is
// built with the cuda backend (so CI compiles and links it) but is not a CTest, since CI has no
// GPU; tools/validate-gpu.sh runs it first and puts its result in its report.
//  - Each layer kind's F, I, W and SGD step on one GPU (CudaStage) against the same operations
//    on the cpu (StageParams, whose gradients tests/executor checks against finite
//    differences): dense layers, GPT blocks, a tensor-parallel rank's block, a Llama-style block
//    (grouped-query attention, SwiGLU, RMSNorm, rotary).
//  - Whole runs (run_on_cuda) against the sequential loop on the cpu: 1F1B and a ReCycle plan
//    over DP 2 x PP 2 on one GPU (the workers share it, SENDs are device copies) or on four or
//    more (a GPU each: NCCL send/receive and all-reduce); on two or three GPUs, which cannot
//    place four workers, 1F1B over PP 2 (NCCL send/receive).
// The bound, 1e-4 of each value (or of 1e-3 where the value is smaller), is set from the
// arithmetic, not from a run: cuBLAS and OpenBLAS sum each product's k terms in different orders
// (about k x 6e-8 apart, k at most 192 here) and the passes chain up to six products.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "executor/cuda/cuda_backend.hpp"
#include "executor/cuda/cuda_stage.hpp"
#include "planner/generators.hpp"
#include "tests/executor/reference.hpp"

using namespace recycle;
using namespace recycle::executor;
using namespace recycle::executor::testing;

namespace {

constexpr double kBound = 1e-4;

int gpus() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

/// Dense layers, GPT blocks, a rank's share of a GPT block, and a Llama-style block.
std::vector<StageShape> shapes() {
  StageShape dense{.width = 64, .layers = 2, .microbatch_size = 16};
  StageShape gpt{.width = 32, .layers = 2, .microbatch_size = 2};
  gpt.block = Block::kTransformer;
  gpt.sequence = 8;
  gpt.heads = 4;
  StageShape rank = gpt;
  rank.head_dim = 12;
  rank.ffn = 40;
  StageShape llama = gpt;
  llama.kv_heads = 2;
  llama.ffn = 48;
  llama.style = transformer::kLlama;
  return {dense, gpt, rank, llama};
}

void check_close(const std::vector<float>& gpu, const std::vector<float>& cpu, const char* what) {
  REQUIRE(gpu.size() == cpu.size());
  const double diff = max_relative_difference(gpu, cpu);
  double largest = 0, absolute = 0;  // the reference's largest magnitude, the largest difference
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    largest = std::max(largest, std::abs(static_cast<double>(cpu[i])));
    absolute = std::max(absolute, std::abs(static_cast<double>(gpu[i]) - cpu[i]));
  }
  INFO(std::string(what) << ": max relative difference " << diff << " (largest difference "
                         << absolute << ", largest magnitude " << largest << ", " << cpu.size()
                         << " values)");
  CHECK(diff < kBound);
}

}  // namespace

TEST_CASE("a GPU is visible") {
  REQUIRE(gpus() > 0);
}

TEST_CASE("each layer kind's F, I, W and step on a GPU are the cpu's") {
  REQUIRE(gpus() > 0);
  const cuda::Lane lane(0);
  for (const StageShape& shape : shapes()) {
    CAPTURE(describe_layers(shape));
    StageParams cpu(shape, 1, 11);
    cuda::CudaStage gpu(lane, shape, 1, 11);
    check_close(gpu.parameters().download(), cpu.parameters(), "initial parameters");
    const std::vector<float> input = synthetic_input(shape, 11, 0, 0, 0);
    const std::vector<float> target = synthetic_target(shape, 11, 0, 0, 0);

    Chunk chunk;
    const std::vector<float> out = cpu.forward(input, chunk);
    std::vector<float> dout;
    const double loss = StageParams::loss(out, target, dout);
    const std::vector<float> dx = cpu.backward_input(dout, chunk);
    cpu.backward_weight(chunk);
    const std::vector<float> gradients = cpu.gradients();
    cpu.step(0.1, 1);

    cuda::DeviceChunk device_chunk;
    const cuda::DeviceTensor device_out =
        gpu.forward(cuda::DeviceTensor::upload(input, lane.device()), device_chunk);
    check_close(device_out.download(), out, "F's output");
    cuda::DeviceTensor device_dout;
    const double device_loss = cuda::CudaStage::loss(
        lane, device_out, cuda::DeviceTensor::upload(target, lane.device()), device_dout);
    CHECK(device_loss == doctest::Approx(loss).epsilon(kBound));
    check_close(device_dout.download(), dout, "the loss's gradient");
    check_close(gpu.backward_input(device_dout, device_chunk).download(), dx, "I's input gradient");
    gpu.backward_weight(device_chunk);
    check_close(gpu.gradients().download(), gradients, "W's parameter gradients");
    gpu.step(0.1, 1);
    check_close(gpu.parameters().download(), cpu.parameters(), "the parameters after the step");
  }
}

TEST_CASE("runs on the GPUs train what the sequential loop on the cpu trains") {
  REQUIRE(gpus() > 0);
  for (const StageShape& shape : shapes()) {
    CAPTURE(describe_layers(shape));
    RunConfig config = small_config();
    config.shape = shape;
    config.learning_rate = 0.05;
    const bool four = gpus() == 1 || gpus() >= 4;
    planner::GeneratorOptions options;
    options.layout = {four ? 2 : 1, 2, 4, 1};
    std::vector<planner::Schedule> schedules{planner::generate_fault_free("1f1b", options)};
    if (four) schedules.push_back(recycle_plan(options.layout, {{1, 0}}));
    for (const planner::Schedule& schedule : schedules) {
      CAPTURE(schedule.workers.size());
      const RunResult run = cuda::run_on_cuda(schedule, config);
      const auto reference = sequential(schedule.layout, config);
      const planner::Layout& l = schedule.layout;
      CHECK(run.microbatches_processed == std::int64_t{config.iterations} * l.dp * l.microbatches);
      for (const WorkerRun& w : run.workers) {
        REQUIRE(w.parameters.size() == 1);
        const auto& [v, params] = w.parameters.front();
        CAPTURE(planner::to_string(w.id));
        check_close(params, reference[static_cast<std::size_t>(v)], "final parameters");
      }
    }
  }
}
