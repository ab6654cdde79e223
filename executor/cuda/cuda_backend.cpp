#include "executor/cuda/cuda_backend.hpp"

#include <nccl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "executor/channels.hpp"
#include "executor/cuda/cuda_stage.hpp"
#include "executor/cuda/device_tensor.hpp"
#include "executor/cuda/kernels.hpp"
#include "executor/footprint.hpp"
#include "executor/measure.hpp"
#include "executor/run_schedule.hpp"
#include "executor/stage_timer.hpp"

namespace recycle::executor::cuda {

namespace {

using Clock = std::chrono::steady_clock;

void check_nccl(ncclResult_t status, const char* what) {
  if (status != ncclSuccess)
    throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(status));
}

/// The GPUs CUDA shows this process; `why` says why there are none when the driver said so.
int visible_gpus(std::string& why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    why = cudaGetErrorString(status);
    return 0;
  }
  return count;
}

GpuPlacement place_workers(std::size_t workers, std::int32_t replicas) {
  std::string why;
  const int gpus = visible_gpus(why);
  return place_on_gpus(workers, replicas, gpus, why);
}

/// AllReduceGroup's shards for ranks sharing one GPU: rank r sums shard r over every rank's
/// vector in rank order on its own stream, then copies the others' reduced shards.
struct DeviceShards {
  std::vector<const Lane*> lanes;  ///< by rank

  void reduce(std::span<DeviceTensor* const> slots, std::size_t rank) const {
    const auto [begin, end] = shard_of(slots.front()->size(), slots.size(), rank);
    std::vector<const float*> in;
    for (const DeviceTensor* s : slots) in.push_back(s->data() + begin);
    sum_in_order(slots[rank]->data() + begin, in.data(), static_cast<int>(in.size()), end - begin,
                 lanes[rank]->stream());
    lanes[rank]->finish();
  }
  void gather(std::span<DeviceTensor* const> slots, std::size_t rank) const {
    for (std::size_t q = 0; q < slots.size(); ++q) {
      if (q == rank) continue;
      const auto [begin, end] = shard_of(slots.front()->size(), slots.size(), q);
      if (end == begin) continue;
      check(cudaMemcpyAsync(slots[rank]->data() + begin, slots[q]->data() + begin,
                            (end - begin) * sizeof(float), cudaMemcpyDeviceToDevice,
                            lanes[rank]->stream()),
            "cudaMemcpyAsync (all-reduce gather)");
    }
    lanes[rank]->finish();
  }
};

/// Polls `stream` until its work has finished (true) or `give_up()` says to stop waiting (false),
/// pausing `pause` between polls.
template <class GiveUp>
bool wait_on(cudaStream_t stream, const char* what, std::chrono::microseconds pause,
             GiveUp&& give_up) {
  while (true) {
    const cudaError_t status = cudaStreamQuery(stream);
    if (status == cudaSuccess) return true;
    if (status != cudaErrorNotReady) check(status, what);
    if (give_up()) return false;
    std::this_thread::sleep_for(pause);
  }
}

/// A stream of its own on `device`, for one communicator's operations: NCCL operations of
/// different communicators queued on one stream by different threads could wait on each other.
class CommStream {
 public:
  explicit CommStream(int device) : device_(device) {
    const DeviceGuard guard(device);
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~CommStream() { static_cast<void>(cudaStreamDestroy(stream_)); }
  CommStream(const CommStream&) = delete;
  CommStream& operator=(const CommStream&) = delete;
  [[nodiscard]] cudaStream_t get() const noexcept { return stream_; }
  [[nodiscard]] int device() const noexcept { return device_; }

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
};

/// ncclAllReduce over ranks on their own GPUs (one communicator each, made together, each rank's
/// operations on a communication stream of its own); a wait polls its stream and gives up,
/// aborting the communicator, when the run stops or the limit passes.
class NcclGroup {
 public:
  NcclGroup(std::vector<const Lane*> lanes, Abort& abort)
      : lanes_(std::move(lanes)), abort_(abort), comms_(lanes_.size(), nullptr) {
    std::vector<int> devices;
    for (const Lane* l : lanes_) {
      devices.push_back(l->device());
      streams_.push_back(std::make_unique<CommStream>(l->device()));
    }
    check_nccl(ncclCommInitAll(comms_.data(), static_cast<int>(devices.size()), devices.data()),
               "ncclCommInitAll");
    warm_up();
  }
  ~NcclGroup() {
    for (ncclComm_t c : comms_) static_cast<void>(ncclCommDestroy(c));
  }
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

  void all_reduce(std::int32_t rank, DeviceTensor& data, const std::string& what) {
    if (lanes_.size() == 1) return;
    const auto r = static_cast<std::size_t>(rank);
    const cudaStream_t stream = streams_[r]->get();
    check_nccl(
        ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat, ncclSum, comms_[r], stream),
        "ncclAllReduce");
    const auto deadline = Clock::now() + abort_.limit();
    bool late = false;
    if (wait_on(stream, "ncclAllReduce", std::chrono::microseconds(20), [&] {
          late = Clock::now() > deadline;
          return late || abort_.raised();
        }))
      return;
    static_cast<void>(ncclCommAbort(comms_[r]));
    comms_[r] = nullptr;
    throw std::runtime_error((late ? "waited over the limit for " : "stopped while waiting for ") +
                             what);
  }

 private:
  /// One all-reduce of one float over every rank, from this thread, before any worker runs: NCCL
  /// may connect its ranks at their first operation, which should not happen while other
  /// communicators' operations run on the same GPUs.
  void warm_up() {
    std::vector<DeviceTensor> scratch;
    for (const Lane* l : lanes_) scratch.emplace_back(1, l->device(), nullptr);
    ncclResult_t status = ncclGroupStart();
    if (status == ncclSuccess) {
      ncclResult_t queued = ncclSuccess;
      for (std::size_t r = 0; r < comms_.size() && queued == ncclSuccess; ++r) {
        queued = ncclAllReduce(scratch[r].data(), scratch[r].data(), 1, ncclFloat, ncclSum,
                               comms_[r], streams_[r]->get());
      }
      status = ncclGroupEnd();
      if (queued != ncclSuccess) status = queued;
    }
    check_nccl(status, "ncclAllReduce (warm-up)");
    const auto deadline = Clock::now() + abort_.limit();
    for (const auto& s : streams_) {
      if (!wait_on(s->get(), "ncclAllReduce (warm-up)", std::chrono::microseconds(20),
                   [&] { return Clock::now() > deadline; }))
        throw std::runtime_error("the all-reduce's first round did not finish within the limit");
    }
  }

  std::vector<const Lane*> lanes_;
  Abort& abort_;
  std::vector<ncclComm_t> comms_;
  std::vector<std::unique_ptr<CommStream>> streams_;  ///< by rank
};

/// The messages from one worker to another on a different GPU: a communicator of the two (rank 0
/// the sender, rank 1 the reader), driven by the sender's thread alone, which queues ncclSend and
/// the matching ncclRecv in one group on a communication stream on each GPU and waits for both.
/// Only the sender's thread uses it, so a message never waits on the reader's thread, as a device
/// copy does not: the SEND is finished before the reader is told, whatever the reader is doing.
class NcclLink {
 public:
  /// Gives up a message (the communicator aborted) that has not arrived within `limit`.
  NcclLink(int from, int to, std::chrono::milliseconds limit)
      : send_(from), recv_(to), limit_(limit) {
    const std::array<int, 2> devices{from, to};
    check_nccl(ncclCommInitAll(comms_.data(), 2, devices.data()), "ncclCommInitAll (send/recv)");
    // One message first, from this thread before any worker runs: NCCL may connect the pair at
    // its first operation, which should not happen while other communicators' run.
    const DeviceTensor one(1, from, nullptr);
    DeviceTensor landed(1, to, nullptr);
    transfer(one, landed);
  }
  ~NcclLink() {
    for (ncclComm_t c : comms_) static_cast<void>(ncclCommDestroy(c));
  }
  NcclLink(const NcclLink&) = delete;
  NcclLink& operator=(const NcclLink&) = delete;

  /// Moves `data` into `out` (as many floats, on the reader's GPU).
  void transfer(const DeviceTensor& data, DeviceTensor& out) const {
    // The group is closed whatever failed inside it, so that the thread is not left in a group.
    ncclResult_t status = ncclGroupStart();
    if (status == ncclSuccess) {
      ncclResult_t queued =
          ncclSend(data.data(), data.size(), ncclFloat, 1, comms_[0], send_.get());
      if (queued == ncclSuccess)
        queued = ncclRecv(out.data(), out.size(), ncclFloat, 0, comms_[1], recv_.get());
      status = ncclGroupEnd();
      if (queued != ncclSuccess) status = queued;
    }
    check_nccl(status, "ncclSend/ncclRecv");
    const auto deadline = Clock::now() + limit_;
    const auto late = [&] { return Clock::now() > deadline; };
    // No pause between polls: a message's latency is a few microseconds.
    if (wait_on(send_.get(), "ncclSend", std::chrono::microseconds(0), late) &&
        wait_on(recv_.get(), "ncclRecv", std::chrono::microseconds(0), late))
      return;
    for (ncclComm_t& c : comms_) {
      static_cast<void>(ncclCommAbort(c));
      c = nullptr;
    }
    throw std::runtime_error("a message between GPUs " + std::to_string(send_.device()) + " and " +
                             std::to_string(recv_.device()) + " did not arrive within the limit");
  }

 private:
  CommStream send_, recv_;
  std::chrono::milliseconds limit_;
  mutable std::array<ncclComm_t, 2> comms_{};
};

/// A stage's gradient all-reduce: on device memory when its ranks share a GPU, NCCL otherwise.
class CudaReduce {
 public:
  CudaReduce(std::vector<const Lane*> lanes, Abort& abort) {
    const bool one_device = std::all_of(lanes.begin(), lanes.end(), [&](const Lane* l) {
      return l->device() == lanes.front()->device();
    });
    const auto ranks = static_cast<std::int32_t>(lanes.size());
    if (one_device) {
      shared_ = std::make_unique<AllReduceGroup<DeviceTensor, DeviceShards>>(
          ranks, abort, DeviceShards{std::move(lanes)});
    } else {
      nccl_ = std::make_unique<NcclGroup>(std::move(lanes), abort);
    }
  }
  void all_reduce(std::int32_t rank, DeviceTensor& data, const std::string& what) {
    if (shared_) {
      shared_->all_reduce(rank, data, what);
    } else {
      nccl_->all_reduce(rank, data, what);
    }
  }

 private:
  std::unique_ptr<AllReduceGroup<DeviceTensor, DeviceShards>> shared_;
  std::unique_ptr<NcclGroup> nccl_;
};

/// The cuda backend of executor/run_schedule.hpp.
class CudaBackend {
 public:
  using Tensor = DeviceTensor;
  using Stage = CudaStage;
  using Chunk = DeviceChunk;
  using Reduce = CudaReduce;

  /// `limit`: how long a SEND between GPUs may take before the run gives up.
  /// No lane for a worker of another process (device -1).
  CudaBackend(const GpuPlacement& placement, std::chrono::milliseconds limit) : limit_(limit) {
    for (const int d : placement.device)
      lanes_.push_back(d >= 0 ? std::make_unique<Lane>(d) : nullptr);
  }

  [[nodiscard]] const Lane& lane(std::size_t w) const { return *lanes_.at(w); }

  /// Before any thread runs: the NCCL link for SENDs from worker `from` to worker `to` when they
  /// are on different GPUs (made once, kept for the run's later schedules).
  void connect(std::size_t from, std::size_t to) {
    const int a = lane(from).device(), b = lane(to).device();
    if (a == b || links_.count({from, to}) != 0) return;
    links_.emplace(std::pair{from, to}, std::make_unique<NcclLink>(a, b, limit_));
  }

  void enter(std::size_t w) const { select_device(lane(w).device()); }
  Stage make_stage(std::size_t w, const StageShape& shape, std::int32_t v,
                   std::uint64_t seed) const {
    return {lane(w), shape, v, seed};
  }
  void load(const std::vector<std::vector<float>>& inputs,
            const std::vector<std::vector<float>>& targets) {
    for (const auto& l : lanes_) {
      if (!l || inputs_.count(l->device()) != 0) continue;
      auto& in = inputs_[l->device()];
      auto& out = targets_[l->device()];
      for (const auto& x : inputs) in.push_back(DeviceTensor::upload(x, l->device()));
      for (const auto& t : targets) out.push_back(DeviceTensor::upload(t, l->device()));
    }
  }
  const Tensor& input(std::size_t w, std::size_t slot) const {
    return inputs_.at(lane(w).device())[slot];
  }
  const Tensor& target(std::size_t w, std::size_t slot) const {
    return targets_.at(lane(w).device())[slot];
  }
  /// Into a buffer on the reader's GPU: a device copy on the sender's stream when they share a
  /// GPU, the pair's NCCL send and receive (connect) otherwise.
  Tensor send(const Tensor& data, std::size_t from, std::size_t to) const {
    const Lane& src = lane(from);
    const Lane& dst = lane(to);
    if (src.device() == dst.device()) {
      Tensor out(data.size(), src.device(), src.stream());
      check(cudaMemcpyAsync(out.data(), data.data(), data.size() * sizeof(float),
                            cudaMemcpyDeviceToDevice, src.stream()),
            "cudaMemcpyAsync (send)");
      src.finish();
      return out;
    }
    const auto link = links_.find({from, to});
    RECYCLE_ASSERT(link != links_.end(), "a SEND between GPUs that were not connected");
    Tensor out(data.size(), dst.device(), nullptr);
    link->second->transfer(data, out);
    return out;
  }
  double loss(std::size_t w, const Tensor& out, const Tensor& target, Tensor& gradient) const {
    return CudaStage::loss(lane(w), out, target, gradient);
  }
  std::unique_ptr<Reduce> make_reduce(const std::vector<std::size_t>& ranks, Abort& abort) const {
    std::vector<const Lane*> lanes;
    for (const std::size_t w : ranks) lanes.push_back(&lane(w));
    return std::make_unique<Reduce>(std::move(lanes), abort);
  }
  static std::vector<float> download(const Tensor& t) { return t.download(); }
  // Between processes: through the host.
  static std::vector<float> into_host(Tensor data) { return data.download(); }
  Tensor from_host(std::size_t w, std::vector<float> data) const {
    return DeviceTensor::upload(data, lane(w).device());
  }
  template <class F>
  static void on_host(Tensor& data, F&& f) {
    std::vector<float> host = data.download();
    std::forward<F>(f)(host);
    data.copy_from(host);
  }

 private:
  std::chrono::milliseconds limit_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::map<int, std::vector<DeviceTensor>> inputs_, targets_;  ///< by device
  /// By (sender, reader); read-only while the workers run.
  std::map<std::pair<std::size_t, std::size_t>, std::unique_ptr<NcclLink>> links_;
};

/// Refuses a run whose workers' memory (run_bytes, shared evenly by the plan's workers) does not
/// fit the free memory of their GPUs (this process's, under mpirun).
void require_gpu_memory(const planner::Schedule& plan, const StageShape& shape,
                        const GpuPlacement& placement) {
  std::map<int, std::int64_t> on;  // workers by GPU
  for (const int d : placement.device) {
    if (d >= 0) ++on[d];
  }
  std::int64_t most = 0;
  for (const auto& [d, n] : on) most = std::max(most, n);
  const auto per_device = run_bytes(plan, shape) * most /
                          std::max<std::int64_t>(1, static_cast<std::int64_t>(plan.workers.size()));
  for (const auto& [d, n] : on) {
    const DeviceGuard guard(d);
    std::size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    if (per_device > static_cast<std::int64_t>(free)) {
      throw InputError("--width/--layers-per-stage/--microbatch-size/--microbatches",
                       "the run needs about " + std::to_string(per_device >> 20) + " MiB on GPU " +
                           std::to_string(d) + ", which has " + std::to_string(free >> 20) +
                           " MiB free");
    }
  }
}

}  // namespace

GpuPlacement place(const planner::Schedule& schedule, const std::optional<ProcessPlace>& process) {
  if (!process) return place_workers(schedule.workers.size(), schedule.layout.dp);
  const auto workers = static_cast<std::size_t>(schedule.layout.workers());
  const auto pp = static_cast<std::size_t>(schedule.layout.pp);
  std::map<int, std::size_t> first, size;  // by process: its block's first flat id, its size
  for (std::size_t f = 0; f < workers; ++f) {
    const int p = process_of(f, workers, process->processes);
    first.try_emplace(p, f);
    ++size[p];
  }
  std::size_t block = 1;
  for (const auto& [p, n] : size) block = std::max(block, n);
  // The workers in the order run_schedule numbers them (its index).
  std::vector<std::optional<std::size_t>> slot;
  for (const auto& [id, stages] : detail::stages_held(schedule)) {
    const std::size_t f = planner::worker_index(id, pp);
    const int p = process_of(f, workers, process->processes);
    slot.push_back(p == process->rank ? std::optional(f - first.at(p)) : std::nullopt);
  }
  std::string why;
  const int gpus = visible_gpus(why);
  return place_block_on_gpus(slot, block, process->node.rank, process->node.size, gpus, why);
}

RunResult run_on_cuda(const planner::Schedule& schedule, const RunConfig& config, Peers* peers) {
  const auto checks = [&](const planner::Schedule& plan, const GpuPlacement& placement) {
    require_run_fits(plan, config.shape, config.iterations, kMaxGpuFlops, kMaxGpuRunBytes);
    require_gpu_memory(plan, config.shape, placement);
  };
  if (peers == nullptr) {
    const GpuPlacement placement = place(schedule);
    CudaBackend backend(placement, config.wait_limit);
    return run_schedule(backend, schedule, config,
                        [&](const planner::Schedule& plan) { checks(plan, placement); });
  }
  // Each process places its own workers on its own GPUs, and a process's refusal is every
  // process's: they agree on it before any runs, so that none waits for the others in vain.
  const std::vector<planner::Schedule> plans = detail::checked_plans(schedule, config);
  GpuPlacement placement;
  SegmentFacts mine;  // raised: 2 for bad input ("where\nproblem"), 1 for another error
  std::exception_ptr error;
  const auto tell = [&](std::int32_t kind, const std::string& reason) {
    mine.raised = kind;
    reason.copy(mine.reason.data(), std::min(reason.size(), mine.reason.size() - 1));
  };
  try {
    placement = place(schedule, ProcessPlace{peers->rank(), peers->size(), peers->node()});
    for (const planner::Schedule& plan : plans) checks(plan, placement);
  } catch (const InputError& e) {
    error = std::current_exception();
    tell(2, e.where() + "\n" + e.problem());
  } catch (const std::exception& e) {
    error = std::current_exception();
    tell(1, e.what());
  }
  const std::vector<SegmentFacts> all = peers->agree(mine);
  if (error) std::rethrow_exception(error);
  for (std::size_t p = 0; p < all.size(); ++p) {
    const std::string reason = all[p].reason.data();
    const std::string process = "process " + std::to_string(p) + ": ";
    if (all[p].raised == 1) throw std::runtime_error(process + reason);
    if (all[p].raised == 2) {
      const std::size_t cut = reason.find('\n');
      throw InputError(reason.substr(0, cut), process + reason.substr(cut + 1));
    }
  }
  CudaBackend backend(placement, config.wait_limit);
  return run_schedule(
      backend, schedule, config, [](const planner::Schedule&) {}, peers);
}

namespace {

/// How long a measurement's probe of a SEND or an all-reduce may wait.
constexpr std::chrono::milliseconds kProbeLimit{60'000};

/// The median time of `repetitions` SENDs of `floats` floats from worker 0 to worker 1.
Nanos time_send(const CudaBackend& backend, std::size_t floats, std::int32_t repetitions) {
  const DeviceTensor data(floats, backend.lane(0).device(), backend.lane(0).stream());
  backend.lane(0).finish();  // allocated in the lane's order, read on the link's streams
  std::vector<Nanos> times;
  for (std::int32_t r = 0; r <= std::max(1, repetitions); ++r) {
    const auto t = Clock::now();
    const DeviceTensor moved = backend.send(data, 0, 1);
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t);
    if (r > 0) times.push_back(ns.count());
  }
  return median_of(std::move(times));
}

/// The median time of an all-reduce of `floats` floats over the first `ranks` workers, each
/// rank on its own thread, as rank 0 sees it.
Nanos time_all_reduce(const CudaBackend& backend, std::size_t floats, std::int32_t ranks,
                      std::int32_t repetitions) {
  Abort abort(kProbeLimit);
  std::vector<std::size_t> members;
  for (std::int32_t r = 0; r < ranks; ++r) members.push_back(static_cast<std::size_t>(r));
  const auto group = backend.make_reduce(members, abort);
  std::vector<Nanos> times;
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<std::size_t>(ranks));
  for (std::int32_t r = 0; r < ranks; ++r) {
    const auto start = [&](auto&& body) {
      try {
        threads.emplace_back(std::forward<decltype(body)>(body));
      } catch (const std::system_error& e) {
        abort.raise("a rank's thread could not start");  // wakes the ranks that wait on it
        for (std::thread& t : threads) t.join();
        refuse_thread(threads.size(), static_cast<std::size_t>(ranks), e, "--backend cuda");
      }
    };
    start([&, r] {
      try {
        backend.enter(static_cast<std::size_t>(r));
        const Lane& lane = backend.lane(static_cast<std::size_t>(r));
        DeviceTensor data = DeviceTensor::upload(std::vector<float>(floats, 1.0F), lane.device());
        for (std::int32_t k = 0; k <= std::max(1, repetitions); ++k) {
          const auto t = Clock::now();
          group->all_reduce(r, data, "the all-reduce probe");
          const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t);
          if (r == 0 && k > 0) times.push_back(ns.count());
        }
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
        abort.raise(e.what());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& e : errors) {
    if (!e.empty()) throw std::runtime_error(e);
  }
  return median_of(std::move(times));
}

}  // namespace

Nanos time_host_staging(std::size_t floats, std::int32_t repetitions) {
  static_cast<void>(place_workers(1, 1));  // refused without a GPU
  const DeviceTensor data = DeviceTensor::upload(std::vector<float>(floats, 1.0F), 0);
  std::vector<Nanos> times;
  for (std::int32_t r = 0; r <= std::max(1, repetitions); ++r) {
    const auto t = Clock::now();
    const DeviceTensor back = DeviceTensor::upload(data.download(), 0);
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t);
    if (r > 0) times.push_back(ns.count());
  }
  return median_of(std::move(times));
}

profiles::Profile measured_profile(const StageShape& shape, std::int32_t pp, std::int32_t replicas,
                                   std::int32_t repetitions, std::int32_t in_flight) {
  require_measurement_fits(shape, std::max(1, repetitions), kMaxGpuFlops, in_flight);
  const std::int32_t ranks = std::max(2, replicas);
  require_all_reduce_fits(shape, ranks);
  const auto workers = static_cast<std::size_t>(std::max(pp * std::max(1, replicas), ranks));
  const GpuPlacement placement = place_workers(workers, ranks);
  CudaBackend backend(placement, kProbeLimit);
  backend.enter(0);
  const Lane& lane = backend.lane(0);
  const DeviceTensor input =
      DeviceTensor::upload(synthetic_input(shape, 1, 0, 0, 0), lane.device());
  const DeviceTensor target =
      DeviceTensor::upload(synthetic_target(shape, 1, 0, 0, 0), lane.device());
  // Timed alone: workers sharing a GPU are modelled as sharing it (sim/shared_cores.hpp), workers
  // on their own GPUs do not slow each other's arithmetic.
  const MeasuredStage stage = time_stage<DeviceChunk>(
      [&] { return CudaStage(lane, shape, 0, 1); }, input, target,
      [&](const DeviceTensor& out, const DeviceTensor& t, DeviceTensor& gradient) {
        return CudaStage::loss(lane, out, t, gradient);
      },
      repetitions, TimingLoad{.concurrent = 1, .in_flight = in_flight, .pin_cpus = {}});
  const auto floats =
      static_cast<std::size_t>(shape.rows()) * static_cast<std::size_t>(shape.width);
  backend.connect(0, 1);
  const Nanos latency = time_send(backend, 1, std::max(repetitions, 101));
  const Nanos message = time_send(backend, floats, repetitions);
  const profiles::StageProfile s = stage_profile(shape, stage);
  profiles::Profile p;
  p.name = "cuda backend (" +
           std::string(placement.shared ? "workers sharing GPU 0" : "a GPU per worker") +
           "): " + describe_layers(shape) + " per stage, micro-batches of " +
           std::to_string(shape.microbatch_size) + " rows";
  p.stages.assign(static_cast<std::size_t>(pp), s);
  p.loss = stage.loss;
  p.hardware.gpus_per_node = static_cast<std::int32_t>(workers);
  p.hardware.intra_node_latency = p.hardware.inter_node_latency = latency;
  p.hardware.intra_node_bandwidth = p.hardware.inter_node_bandwidth =
      message > latency
          ? static_cast<double>(s.output_bytes) / (static_cast<double>(message - latency) * 1e-9)
          : kMovedBandwidth;
  std::size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  p.hardware.memory_bytes = static_cast<Bytes>(total);
  p.hardware.all_reduce_bus_bandwidth = bus_bandwidth(
      s.param_bytes, ranks,
      time_all_reduce(backend, static_cast<std::size_t>(s.param_bytes / 4), ranks, repetitions));
  return p;
}

}  // namespace recycle::executor::cuda
