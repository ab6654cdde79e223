// The cuda backend: runs schedule files (executor/run_schedule.hpp, the runtime's one body) with
// each worker's arithmetic on a GPU (executor/cuda/cuda_stage.hpp), and measures the profile the
// simulator predicts its runs from.
//  - Placement (executor/placement.hpp): one worker per GPU, or every worker on the machine's one
//    GPU, each on its own stream.
//  - SEND: the message into a buffer on the reader's GPU, finished before the reader is told: a
//    device copy when they share a GPU, else ncclSend and ncclRecv of a communicator of the two
//    GPUs, made before the run for each (sender, reader) pair of the schedule and driven by the
//    sender's thread alone.
//  - Under mpirun (executor/peers.hpp), each process runs its own workers on its machine's GPUs
//    (executor/placement.hpp's place_block_on_gpus). A message to another process goes through
//    the host: copied off the sender's GPU, sent by MPI, copied onto the reader's GPU when it
//    arrives. The gradient all-reduce and the optimizer barrier go by message too, on the host
//    (executor/message_reduce.hpp), in every process alike.
//  - REDUCE_GRAD: workers sharing a GPU each sum a shard of the gradients over the replicas, in
//    replica order, and copy the others' shards (the cpu backend's AllReduceGroup on device
//    memory); workers on their own GPUs run ncclAllReduce on communication streams, whose waits
//    give up (the communicator aborted) when the run stops or the wait limit passes, so a lost
//    peer never hangs a run.
// Dense layers or transformer blocks (GPT's or Llama's); the timing brackets each action on the
// host after its stream finished.
#pragma once

#include <cstdint>
#include <optional>

#include "core/units.hpp"
#include "executor/peers.hpp"
#include "executor/placement.hpp"
#include "executor/runtime.hpp"
#include "profiles/profile.hpp"

namespace recycle::executor::cuda {

/// A process of a run under mpirun, as placement sees it.
struct ProcessPlace {
  int rank = 0;
  int processes = 1;
  Peers::Node node;
};

/// Where the live workers of `schedule` go on this machine's GPUs: every one of them, or under
/// mpirun those of `process` (the others' device -1). InputError naming --backend when there are
/// none or too few.
[[nodiscard]] GpuPlacement place(const planner::Schedule& schedule,
                                 const std::optional<ProcessPlace>& process = std::nullopt);

/// run_on_cpu on the GPUs: the same checks first, then the GPU memory the run needs against what
/// each GPU has free (InputError naming the workload's flags). With peers, this process's
/// workers, after every process has placed its own and checked their memory: a process that
/// cannot refuses the run in every process.
[[nodiscard]] RunResult run_on_cuda(const planner::Schedule& schedule, const RunConfig& config,
                                    Peers* peers = nullptr);

/// What the host adds to a message between processes under mpirun: the median time of copying
/// `floats` floats off GPU 0 and back onto it, over `repetitions` (after a warm-up).
[[nodiscard]] Nanos time_host_staging(std::size_t floats, std::int32_t repetitions);

/// measured_profile for the cuda backend: F, I, W and the step timed alone on GPU 0 (workers that
/// share a GPU are modelled as sharing it, sim/shared_cores.hpp), `in_flight` micro-batches held
/// at once; a message's latency and bandwidth from timed SENDs between two workers placed as a
/// run places them; the all-reduce's bus bandwidth timed over `replicas` ranks (at least 2)
/// placed the same way.
[[nodiscard]] profiles::Profile measured_profile(const StageShape& shape, std::int32_t pp,
                                                 std::int32_t replicas, std::int32_t repetitions,
                                                 std::int32_t in_flight = 1);

}  // namespace recycle::executor::cuda
