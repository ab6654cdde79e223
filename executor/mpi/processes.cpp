#include "executor/mpi/processes.hpp"
#include "executor/wire_format.hpp"

#include <mpi.h>
#include <sys/prctl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "executor/peers.hpp"
#include "planner/language/schedule_io.hpp"

namespace recycle::executor::mpi {

namespace {

using Clock = std::chrono::steady_clock;

Processes* g_current = nullptr;

// Tags of the control communicator (process 0 to the others, between runs).
constexpr int kRun = 1;     ///< a run: its settings and schedules
constexpr int kStop = 2;    ///< no more runs
constexpr int kResult = 3;  ///< a process's part of a run's result, to process 0
constexpr int kProbe = 4;   ///< process 1 echoes messages (Processes::measure_link)
// Tags of the data communicator (between the processes of one run, received by each process's
// progress thread).
constexpr int kData = 10;      ///< an activation, a gradient or an all-reduce shard
constexpr int kBeat = 11;      ///< a heartbeat
constexpr int kAbort = 12;     ///< the run stops
constexpr int kFinished = 13;  ///< a worker finished an iteration

void check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

/// How a thread waits for MPI without holding a core: it polls with yields for `spin` (a message
/// or a transfer in progress usually completes within it, and large messages move only while
/// their sender polls), then sleeps between polls, the sleeps doubling up to `longest`.
class Backoff {
 public:
  Backoff(std::chrono::microseconds spin, std::chrono::microseconds longest)
      : spin_(spin), longest_(longest) {
    reset();
  }
  /// Something happened: spin again.
  void reset() {
    spin_until_ = Clock::now() + spin_;
    pause_ = std::chrono::microseconds(1);
  }
  void idle() {
    if (Clock::now() < spin_until_) {
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(pause_);
    pause_ = std::min(pause_ * 2, longest_);
  }

 private:
  std::chrono::microseconds spin_, longest_, pause_{1};
  Clock::time_point spin_until_;
};

/// Waits for `request` (Backoff: `spin`, then sleeps up to 200 us); gives up (std::runtime_error
/// naming `what`) after `limit`.
void wait(MPI_Request& request, const std::string& what, std::chrono::milliseconds limit,
          std::chrono::microseconds spin = std::chrono::microseconds(50)) {
  const auto deadline = Clock::now() + limit;
  Backoff backoff(spin, std::chrono::microseconds(200));
  while (true) {
    int done = 0;
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done != 0) return;
    if (Clock::now() > deadline) {
      MPI_Cancel(&request);
      throw std::runtime_error("waited over " + std::to_string(limit.count() / 1000) + " s for " +
                               what + " (another process stopped answering)");
    }
    backoff.idle();
  }
}

}  // namespace

struct Processes::Impl {
  MPI_Comm control = MPI_COMM_NULL;
  MPI_Comm data = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  Peers::Node node;              ///< among the processes on this machine
  std::int64_t generations = 0;  ///< MpiPeers made so far (runs and probes), alike in every process
};

namespace {

/// One run's Peers on MPI: the data communicator's messages are taken in by threads waiting on
/// a mailbox and by a progress thread, and handed to the open schedule's links: its deliveries,
/// abort, heartbeats and counts.
class MpiPeers final : public Peers {
 public:
  /// `generation`: this peers' number among the program's (every process counts them alike), so
  /// that a message of an earlier run still in flight is never taken for one of this run.
  MpiPeers(const Processes::Impl& processes, std::int64_t generation,
           std::chrono::milliseconds limit)
      : control_(processes.control),
        data_(processes.data),
        node_(processes.node),
        generation_(generation),
        limit_(limit) {
    MPI_Comm_rank(control_, &rank_);
    MPI_Comm_size(control_, &size_);
    progress_ = std::thread([this] { progress(); });
  }
  /// Sees this process's sends through, waits for every process to have done so (a message
  /// between them is received), then stops the progress thread.
  ~MpiPeers() override {
    try {
      const auto deadline = Clock::now() + limit_;
      while (sending() && Clock::now() < deadline) std::this_thread::sleep_for(kPoll);
      barrier();
    } catch (const std::exception&) {
      // Another process stopped answering: its messages no longer matter.
    }
    stopping_ = true;
    progress_.join();
  }
  MpiPeers(const MpiPeers&) = delete;
  MpiPeers& operator=(const MpiPeers&) = delete;

  [[nodiscard]] bool root() const override { return rank_ == 0; }
  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] Node node() const override { return node_; }
  void barrier() override {
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Ibarrier(control_, &request), "MPI_Ibarrier");
    wait(request, "the other processes", limit_);
  }

  void open(SegmentLinks links) override {
    const std::lock_guard lock(mutex_);
    links_ = std::move(links);
    open_ = true;
  }
  void listen(Heartbeats* heartbeats) override {
    const std::lock_guard lock(mutex_);
    heartbeats_ = heartbeats;
  }
  void close() override {
    const std::lock_guard lock(mutex_);
    open_ = false;
    heartbeats_ = nullptr;
    links_ = {};
  }

  void send(int to, std::size_t reader, const MessageKey& key,
            const std::vector<float>& data) override {
    Writer out;
    out.put(segment());
    out.put(static_cast<std::int64_t>(reader));
    std::apply([&](const auto&... field) { (out.put(field), ...); }, key);
    out.put_vector(data);
    post(to, kData, std::move(out.bytes()));
  }
  void forward_abort(const std::string& reason) override {
    Writer out;
    out.put(segment());
    out.put_string(reason);
    to_others(kAbort, out.bytes());
  }
  void forward_beat(std::size_t worker) override {
    Writer out;
    out.put(segment());
    out.put(static_cast<std::int64_t>(worker));
    to_others(kBeat, out.bytes());
  }
  void forward_finished(std::int32_t iteration) override {
    Writer out;
    out.put(segment());
    out.put(static_cast<std::int64_t>(iteration));
    to_others(kFinished, out.bytes());
  }

  [[nodiscard]] std::vector<SegmentFacts> agree(const SegmentFacts& mine) override {
    static_assert(std::is_trivially_copyable_v<SegmentFacts>);
    std::vector<SegmentFacts> all(static_cast<std::size_t>(size_));
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Iallgather(&mine, sizeof(SegmentFacts), MPI_BYTE, all.data(), sizeof(SegmentFacts),
                         MPI_BYTE, control_, &request),
          "MPI_Iallgather");
    wait(request, "the other processes' account of the schedule", limit_);
    return all;
  }
  [[nodiscard]] std::vector<std::int32_t> sum(const std::vector<std::int32_t>& counts) override {
    std::vector<std::int32_t> out(counts.size());
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Iallreduce(counts.data(), out.data(), static_cast<int>(counts.size()), MPI_INT32_T,
                         MPI_SUM, control_, &request),
          "MPI_Iallreduce");
    wait(request, "the other processes' counts", limit_);
    return out;
  }

  void collect(RunResult& result, const std::vector<bool>& mine,
               std::vector<std::int32_t>& processed, std::vector<double>& losses,
               std::vector<std::int64_t>& iteration_end) override {
    if (!root()) {
      Writer out;
      out.put(static_cast<std::uint64_t>(std::count(mine.begin(), mine.end(), true)));
      for (std::size_t w = 0; w < result.workers.size(); ++w) {
        if (!mine[w]) continue;
        const WorkerRun& run = result.workers[w];
        out.put(static_cast<std::uint64_t>(w));
        out.put(run.killed);
        out.put_vector(run.timeline);
        out.put(static_cast<std::uint64_t>(run.parameters.size()));
        for (const auto& [v, values] : run.parameters) {
          out.put(v);
          out.put_vector(values);
        }
      }
      out.put_vector(processed);
      out.put_vector(losses);
      out.put_vector(iteration_end);
      MPI_Request request = MPI_REQUEST_NULL;
      check(MPI_Isend(out.bytes().data(), static_cast<int>(out.bytes().size()), MPI_BYTE, 0,
                      kResult, control_, &request),
            "MPI_Isend");
      wait(request, "process 0 to take this process's result", limit_);
      return;
    }
    for (int from = 1; from < size_; ++from) {
      const std::vector<char> bytes =
          receive(control_, from, kResult, limit_,
                  Backoff(std::chrono::microseconds(50), std::chrono::microseconds(200)))
              .first;
      Reader in(bytes);
      const auto workers = in.get<std::uint64_t>();
      for (std::uint64_t k = 0; k < workers; ++k) {
        WorkerRun& run = result.workers.at(static_cast<std::size_t>(in.get<std::uint64_t>()));
        run.killed = in.get<bool>();
        run.timeline = in.get_vector<TimedAction>();
        run.parameters.clear();
        const auto stages = in.get<std::uint64_t>();
        for (std::uint64_t s = 0; s < stages; ++s) {
          const auto v = in.get<std::int32_t>();
          run.parameters.emplace_back(v, in.get_vector<float>());
        }
      }
      const auto their_processed = in.get_vector<std::int32_t>();
      const auto their_losses = in.get_vector<double>();
      const auto their_ends = in.get_vector<std::int64_t>();
      RECYCLE_ASSERT(their_processed.size() == processed.size() &&
                         their_losses.size() == losses.size() &&
                         their_ends.size() == iteration_end.size(),
                     "processes ran runs of different shapes");
      // Each micro-batch's loss is computed in one process, the others hold 0 for it.
      for (std::size_t i = 0; i < processed.size(); ++i) {
        processed[i] += their_processed[i];
        losses[i] += their_losses[i];
      }
      for (std::size_t i = 0; i < iteration_end.size(); ++i)
        iteration_end[i] = std::max(iteration_end[i], their_ends[i]);
    }
  }

  /// Receives the next message from `from` with `tag` (MPI_ANY_TAG: any) on `comm`, polled with
  /// `backoff`; the message and its tag.
  static std::pair<std::vector<char>, int> receive(MPI_Comm comm, int from, int tag,
                                                   std::chrono::milliseconds limit,
                                                   Backoff backoff) {
    const auto deadline = Clock::now() + limit;
    while (true) {
      int found = 0;
      MPI_Message message;
      MPI_Status status;
      check(MPI_Improbe(from, tag, comm, &found, &message, &status), "MPI_Improbe");
      if (found != 0) {
        int bytes = 0;
        MPI_Get_count(&status, MPI_BYTE, &bytes);
        std::vector<char> buffer(static_cast<std::size_t>(bytes));
        check(MPI_Mrecv(buffer.data(), bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE), "MPI_Mrecv");
        return {std::move(buffer), status.MPI_TAG};
      }
      if (Clock::now() > deadline) {
        throw std::runtime_error("waited over " + std::to_string(limit.count() / 1000) +
                                 " s for process " + std::to_string(from) +
                                 " (it stopped answering)");
      }
      backoff.idle();
    }
  }

  /// One step of progress, by the progress thread or a thread waiting for a message: tests the
  /// sends in flight, and receives at most one message and hands it on; true when either did
  /// something.
  bool take_in() override {
    const bool sent = push_sends();
    int found = 0;
    MPI_Message message;
    MPI_Status status;
    if (MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, data_, &found, &message, &status) != MPI_SUCCESS ||
        found == 0)
      return sent;
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    std::vector<char> buffer(static_cast<std::size_t>(bytes));
    if (MPI_Mrecv(buffer.data(), bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE) == MPI_SUCCESS)
      hand_on(status.MPI_TAG, buffer);
    return true;
  }

 private:
  /// What this run's messages of the open schedule carry: the generation and the schedule.
  std::int64_t segment() {
    const std::lock_guard lock(mutex_);
    return (generation_ << 32) + links_.segment;
  }
  /// Starts sending `bytes`; the progress thread sees it through (a SEND does not hold its
  /// worker for the transfer, as a send on a communication stream does not).
  void post(int to, int tag, std::vector<char> bytes) {
    auto outgoing = std::make_unique<Outgoing>();
    outgoing->bytes = std::move(bytes);
    check(MPI_Isend(outgoing->bytes.data(), static_cast<int>(outgoing->bytes.size()), MPI_BYTE, to,
                    tag, data_, &outgoing->request),
          "MPI_Isend");
    const std::lock_guard lock(outgoing_mutex_);
    outgoing_.push_back(std::move(outgoing));
  }
  /// Tests every send in flight once; true when one completed.
  bool push_sends() {
    const std::lock_guard lock(outgoing_mutex_);
    const std::size_t before = outgoing_.size();
    std::erase_if(outgoing_, [](const std::unique_ptr<Outgoing>& o) {
      int done = 0;
      return MPI_Test(&o->request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done != 0;
    });
    return outgoing_.size() != before;
  }
  [[nodiscard]] bool sending() {
    const std::lock_guard lock(outgoing_mutex_);
    return !outgoing_.empty();
  }
  void to_others(int tag, const std::vector<char>& bytes) {
    for (int to = 0; to < size_; ++to) {
      if (to != rank_) post(to, tag, bytes);
    }
  }

  /// The progress thread: takes in what arrives while no thread waits for it (heartbeats,
  /// aborts, data sent ahead of its use) and sees sends through. A thread that waits takes in
  /// for itself, so this one can sleep long between looks and leave the cores to the workers.
  void progress() {
    // Its sleeps end when asked, not up to 50 us later (Linux's default timer slack).
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    Backoff backoff(std::chrono::microseconds(20), std::chrono::microseconds(1000));
    while (!stopping_) {
      if (take_in()) {
        backoff.reset();
      } else {
        backoff.idle();
      }
    }
  }

  void hand_on(int tag, const std::vector<char>& bytes) {
    Reader in(bytes);
    const auto segment = in.get<std::int64_t>();
    const std::lock_guard lock(mutex_);
    // A stopped schedule's or an earlier run's: nobody waits on it.
    if (!open_ || segment != (generation_ << 32) + links_.segment) return;
    switch (tag) {
      case kData: {
        const auto reader = static_cast<std::size_t>(in.get<std::int64_t>());
        MessageKey key;
        std::apply(
            [&](auto&... field) {
              ((field = in.get<std::remove_reference_t<decltype(field)>>()), ...);
            },
            key);
        links_.deliver(reader, key, in.get_vector<float>());
        break;
      }
      case kBeat:
        if (heartbeats_ != nullptr)
          heartbeats_->heard(static_cast<std::size_t>(in.get<std::int64_t>()));
        break;
      case kAbort:
        links_.abort->raise_forwarded(in.get_string());
        break;
      case kFinished: {
        const auto iteration = static_cast<std::size_t>(in.get<std::int64_t>());
        if (iteration < links_.finished->size()) ++(*links_.finished)[iteration];
        break;
      }
      default:
        break;
    }
  }

  MPI_Comm control_, data_;
  Node node_;
  std::int64_t generation_;
  std::chrono::milliseconds limit_;
  int rank_ = 0, size_ = 1;
  std::mutex mutex_;  ///< guards what follows
  bool open_ = false;
  SegmentLinks links_;
  Heartbeats* heartbeats_ = nullptr;
  struct Outgoing {
    std::vector<char> bytes;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  static constexpr std::chrono::microseconds kPoll{50};
  std::mutex outgoing_mutex_;
  std::vector<std::unique_ptr<Outgoing>> outgoing_;  ///< sends in flight
  std::atomic<bool> stopping_{false};
  std::thread progress_;
};

/// How long process 0 and the others wait between runs: a command may time its operations for
/// minutes before it runs a schedule.
constexpr std::chrono::hours kBetweenRuns{24};

}  // namespace

std::unique_ptr<Processes> Processes::start(int* argc, char*** argv) {
  // Started by a launcher: Open MPI, MPICH and Slurm's PMI set these.
  const char* size_text = nullptr;
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if ((size_text = std::getenv(name)) != nullptr) break;
  }
  if (size_text == nullptr || std::atoi(size_text) < 2) return nullptr;
  int provided = 0;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  auto impl = std::make_unique<Impl>();
  MPI_Comm_rank(MPI_COMM_WORLD, &impl->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &impl->size);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (impl->rank == 0) {
      std::fprintf(stderr,
                   "error: mpirun: this MPI library does not let several threads call it "
                   "(MPI_THREAD_MULTIPLE); the workers are threads\n");
    }
    MPI_Finalize();
    std::exit(2);
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &impl->control);
  MPI_Comm_dup(MPI_COMM_WORLD, &impl->data);
  MPI_Comm machine = MPI_COMM_NULL;  // the processes that share this one's memory (and GPUs)
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, impl->rank, MPI_INFO_NULL, &machine);
  MPI_Comm_rank(machine, &impl->node.rank);
  MPI_Comm_size(machine, &impl->node.size);
  MPI_Comm_free(&machine);
  return std::unique_ptr<Processes>(new Processes(std::move(impl)));
}

Processes::Processes(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Processes::~Processes() {
  if (impl_->rank == 0) {
    for (int to = 1; to < impl_->size; ++to) {
      MPI_Request request = MPI_REQUEST_NULL;
      MPI_Isend(nullptr, 0, MPI_BYTE, to, kStop, impl_->control, &request);
      try {
        wait(request, "process " + std::to_string(to) + " to stop", std::chrono::seconds(60));
      } catch (const std::exception&) {
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    }
  }
  MPI_Comm_free(&impl_->data);
  MPI_Comm_free(&impl_->control);
  MPI_Finalize();
}

int Processes::rank() const noexcept {
  return impl_->rank;
}
int Processes::size() const noexcept {
  return impl_->size;
}
Peers::Node Processes::node() const noexcept {
  return impl_->node;
}

RunResult run_on_cpu(std::int32_t /*backend*/, const planner::Schedule& schedule,
                     const RunConfig& config, Peers& peers) {
  return executor::run_on_cpu(schedule, config, &peers);
}

RunResult Processes::run(std::int32_t backend, const planner::Schedule& schedule,
                         const RunConfig& config, const Runner& runner) {
  const std::vector<char> request = encode_run(backend, schedule, config);
  for (int to = 1; to < impl_->size; ++to) {
    MPI_Request sent = MPI_REQUEST_NULL;
    check(MPI_Isend(request.data(), static_cast<int>(request.size()), MPI_BYTE, to, kRun,
                    impl_->control, &sent),
          "MPI_Isend");
    wait(sent, "process " + std::to_string(to) + " to take the run", config.wait_limit);
  }
  MpiPeers peers(*impl_, impl_->generations++, config.wait_limit);
  return runner(backend, schedule, config, peers);
}

namespace {

/// The link probe's two ends: process 0 sends `rounds` messages of each size in `sizes` and times
/// their return; process 1 sends each back. Both go through MpiPeers as a run's messages do.
std::vector<std::vector<Nanos>> probe_link(const Processes::Impl& processes,
                                           std::int64_t generation, int rank,
                                           const std::vector<std::size_t>& sizes,
                                           std::int32_t rounds) {
  const std::chrono::milliseconds limit(60'000);
  Abort abort(limit);
  Mailbox<> box(abort);
  std::vector<std::atomic<std::int32_t>> unused(1);
  MpiPeers peers(processes, generation, limit);
  SegmentLinks links;
  box.poll_while_waiting({[&peers] { return peers.take_in(); }, std::chrono::microseconds(20)});
  links.deliver = [&box](std::size_t /*reader*/, const MessageKey& key, std::vector<float> data) {
    box.deliver(key, std::move(data));
  };
  links.abort = &abort;
  links.finished = &unused;
  peers.open(std::move(links));
  peers.barrier();
  std::vector<std::vector<Nanos>> trips(sizes.size());
  std::int64_t key = 0;
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    for (std::int32_t r = 0; r < rounds; ++r, ++key) {
      const MessageKey k{0, 0, 0, 0, key};
      if (rank != 0) {
        peers.send(0, 0, k, box.take(k, "the link probe"));
        continue;
      }
      const auto start = Clock::now();
      peers.send(1, 0, k, std::vector<float>(sizes[s], 1.0F));
      static_cast<void>(box.take(k, "the link probe"));
      if (r > 0) {  // the first is a warm-up
        trips[s].push_back(
            std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
      }
    }
  }
  peers.barrier();
  peers.close();
  return trips;
}

Nanos median(std::vector<Nanos> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

}  // namespace

Processes::Link Processes::measure_link(std::int32_t repetitions) {
  const std::int32_t rounds = std::max(1, repetitions) + 1;
  const std::size_t floats = kLinkProbeFloats;
  Writer request;
  request.put(static_cast<std::uint64_t>(floats));
  request.put(rounds);
  for (int to = 1; to < impl_->size; ++to) {
    MPI_Request sent = MPI_REQUEST_NULL;
    check(MPI_Isend(request.bytes().data(), static_cast<int>(request.bytes().size()), MPI_BYTE, to,
                    kProbe, impl_->control, &sent),
          "MPI_Isend");
    wait(sent, "process " + std::to_string(to) + " to take the link probe",
         std::chrono::seconds(60));
  }
  const auto trips = probe_link(*impl_, impl_->generations++, 0, {1, floats}, rounds);
  Link link;
  link.latency = median(trips[0]) / 2;
  const Nanos large = median(trips[1]) / 2 - link.latency;
  link.bandwidth =
      large > 0 ? static_cast<double>(floats) * 4.0 / (static_cast<double>(large) * 1e-9) : 0.0;
  return link;
}

int Processes::serve(const Runner& runner) {
  while (true) {
    // Between runs process 0 may time its operations for minutes: sleep up to 1 ms between looks.
    std::pair<std::vector<char>, int> next;
    try {
      next =
          MpiPeers::receive(impl_->control, 0, MPI_ANY_TAG,
                            std::chrono::duration_cast<std::chrono::milliseconds>(kBetweenRuns),
                            Backoff(std::chrono::microseconds(0), std::chrono::microseconds(1000)));
    } catch (const std::runtime_error&) {
      return 2;  // process 0 stopped answering
    }
    const auto& [bytes, tag] = next;
    if (tag == kStop) return 0;
    if (tag == kProbe) {
      Reader in(bytes);
      const auto floats = static_cast<std::size_t>(in.get<std::uint64_t>());
      const auto rounds = in.get<std::int32_t>();
      // Only process 1 echoes; the others join the probe's barriers.
      static_cast<void>(probe_link(*impl_, impl_->generations++, impl_->rank == 1 ? 1 : -1,
                                   {1, floats}, impl_->rank == 1 ? rounds : 0));
      continue;
    }
    if (tag != kRun) continue;
    const RunRequest run = decode_run(bytes);
    try {
      MpiPeers peers(*impl_, impl_->generations++, run.config.wait_limit);
      static_cast<void>(runner(run.backend, run.schedule, run.config, peers));
    } catch (const std::exception&) {
      // Process 0 meets the same error (the same checks, the same agreed facts) and reports it.
    }
  }
}

Processes* current() noexcept {
  return g_current;
}
void set_current(Processes* processes) noexcept {
  g_current = processes;
}

}  // namespace recycle::executor::mpi
