// Where the cuda backend puts a run's workers: the rules of executor/placement.hpp, worked by
// hand, and every refusal an InputError naming --backend.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "executor/placement.hpp"

using namespace recycle;
using namespace recycle::executor;

namespace {

std::string refusal(std::size_t workers, std::int32_t replicas, int gpus,
                    const std::string& why = "") {
  try {
    static_cast<void>(place_on_gpus(workers, replicas, gpus, why));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("one worker per GPU when there are enough") {
  const GpuPlacement four = place_on_gpus(4, 2, 8);
  CHECK(four.device == std::vector<int>{0, 1, 2, 3});
  CHECK(!four.shared);
  const GpuPlacement exact = place_on_gpus(3, 1, 3);
  CHECK(exact.device == std::vector<int>{0, 1, 2});
  CHECK(!exact.shared);
}

TEST_CASE("every worker on the one GPU of a one-GPU machine") {
  const GpuPlacement p = place_on_gpus(5, 2, 1);
  CHECK(p.device == std::vector<int>(5, 0));
  CHECK(p.shared);
  const GpuPlacement alone = place_on_gpus(1, 1, 1);
  CHECK(alone.device == std::vector<int>{0});
  CHECK(!alone.shared);  // one worker shares with nobody
  // 64 replicas of a stage can share it, 65 cannot.
  CHECK(place_on_gpus(128, 64, 1).shared);
  CHECK(refusal(130, 65, 1).find("65 replicas of a stage on one GPU: at most 64") !=
        std::string::npos);
}

TEST_CASE("no GPU or too few: refused, naming --backend cuda and why") {
  const std::string none = refusal(2, 1, 0, "no CUDA-capable device is detected");
  CHECK(none.find("--backend cuda") != std::string::npos);
  CHECK(none.find("no GPU is visible (no CUDA-capable device is detected)") != std::string::npos);
  CHECK(refusal(2, 1, 0).find("no GPU is visible") != std::string::npos);
  const std::string few = refusal(4, 2, 2);
  CHECK(few.find("4 live workers need a GPU each, or one GPU between them; this machine has 2") !=
        std::string::npos);
}

TEST_CASE("under mpirun: a GPU per slot of the machine, counted over its processes' blocks") {
  using Slots = std::vector<std::optional<std::size_t>>;
  // Two processes on an 8-GPU machine, four workers each: the second takes GPUs 4 to 7.
  const GpuPlacement second = place_block_on_gpus(
      Slots{std::nullopt, std::nullopt, std::nullopt, std::nullopt, 0, 1, 2, 3}, 4, 1, 2, 8);
  CHECK(second.device == std::vector<int>{-1, -1, -1, -1, 4, 5, 6, 7});
  CHECK(!second.shared);
  // A failed worker leaves its GPU empty, as on the machine: the others keep theirs.
  const GpuPlacement gap = place_block_on_gpus(Slots{0, 2, std::nullopt}, 3, 0, 2, 6);
  CHECK(gap.device == std::vector<int>{0, 2, -1});
  // One GPU: every worker of the machine on it, shared unless it runs a single worker.
  const GpuPlacement one = place_block_on_gpus(Slots{std::nullopt, 0, 1}, 2, 1, 2, 1);
  CHECK(one.device == std::vector<int>{-1, 0, 0});
  CHECK(one.shared);
  CHECK(!place_block_on_gpus(Slots{0}, 1, 0, 1, 1).shared);
}

TEST_CASE("under mpirun: too few GPUs for the machine's processes, or none, refused") {
  using Slots = std::vector<std::optional<std::size_t>>;
  const auto refused = [](int gpus) {
    try {
      static_cast<void>(place_block_on_gpus(Slots{0, 1, 2, 3}, 4, 0, 2, gpus, "no driver"));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // 2 processes x 4 workers = 8 slots on a 4-GPU machine.
  CHECK(refused(4).find("--backend cuda") != std::string::npos);
  CHECK(refused(4).find("(8)") != std::string::npos);
  CHECK(refused(4).find("it has 4") != std::string::npos);
  CHECK(refused(0).find("no GPU is visible (no driver)") != std::string::npos);
  CHECK(refused(8).empty());
}

TEST_CASE("the cpu backend: as many workers as OpenBLAS lets call it at once") {
  // Read from the library's own configuration string (OpenBLAS 0.3.21 on Debian: MAX_THREADS=64).
  CHECK(blas_max_threads("OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY SkylakeX "
                         "MAX_THREADS=64") == 64);
  CHECK(blas_max_threads("OpenBLAS 0.3.26 MAX_THREADS=512 Haswell") == 512);
  CHECK_FALSE(blas_max_threads("OpenBLAS 0.2.20 Haswell").has_value());
  CHECK_FALSE(blas_max_threads("MAX_THREADS=").has_value());
  CHECK_FALSE(blas_max_threads("MAX_THREADS=0").has_value());
  const std::int32_t limit = cpu_worker_limit();
  CHECK(limit >= 1);
  CHECK_NOTHROW(require_cpu_placement(static_cast<std::size_t>(limit)));
  try {
    require_cpu_placement(static_cast<std::size_t>(limit) + 1);
    FAIL("more workers than the limit were placed");
  } catch (const InputError& e) {
    CHECK(e.where() == "--backend cpu");
  }
}
