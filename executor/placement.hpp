// Where the backends put a run's workers, decided before anything runs. The cuda backend: one
// worker per GPU when there are enough GPUs, all of them on one GPU when the machine has one (the
// common development box: their streams share the device, their transfers are device copies, and
// the simulator is told that they share it), else the run is refused. The cpu backend: a thread
// per worker, as many as its BLAS library lets call it at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace recycle::executor {

/// Most replicas of one stage that can share a GPU: the device all-reduce sums them in one pass.
inline constexpr std::int32_t kMaxSharedReplicas = 64;

struct GpuPlacement {
  std::vector<int> device;  ///< by worker, in the order of the run's first schedule
  bool shared = false;      ///< several workers on one GPU
};

/// Places `workers` live workers, the largest number of replicas of a stage being `replicas`, on
/// `gpus` GPUs (`why_none`: why the driver sees none, when it said so). Throws InputError naming
/// --backend when they cannot be placed: no GPU, more workers than GPUs but more than one GPU,
/// more than kMaxSharedReplicas replicas sharing one GPU.
[[nodiscard]] GpuPlacement place_on_gpus(std::size_t workers, std::int32_t replicas, int gpus,
                                         const std::string& why_none = "");

/// Under mpirun (executor/peers.hpp): places this process's workers on the GPUs of its machine,
/// which `node_size` processes share, this one `node_rank` among them, each running a block of
/// `block` worker slots. `slot[i]`: worker i's slot in its process's block, nullopt for a worker
/// of another process (device -1). One GPU per slot of the machine (GPU node_rank x block +
/// slot), or every worker of the machine on its one GPU. Throws InputError naming --backend cuda
/// when the machine has no GPU, or more than one but fewer than node_size x block.
[[nodiscard]] GpuPlacement place_block_on_gpus(const std::vector<std::optional<std::size_t>>& slot,
                                               std::size_t block, int node_rank, int node_size,
                                               int gpus, const std::string& why_none = "");

/// The number after "MAX_THREADS=" in an OpenBLAS configuration string (openblas_get_config());
/// nullopt when it has none.
[[nodiscard]] std::optional<std::int32_t> blas_max_threads(std::string_view config);

/// The most workers the cpu backend runs, each a thread calling OpenBLAS: the MAX_THREADS its
/// OpenBLAS was built for. Past its table of per-thread buffers, OpenBLAS (0.3.21) corrupts memory
/// or stops the program. 50, the smallest table an OpenBLAS build has, when the library does not
/// say.
[[nodiscard]] std::int32_t cpu_worker_limit();

/// Refuses (InputError naming --backend cpu) more than cpu_worker_limit() live workers.
void require_cpu_placement(std::size_t workers);

}  // namespace recycle::executor
