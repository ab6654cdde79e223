// The rules of the schedule language, written once (docs/architecture.md, "Semantics"). Every
// consumer asks these functions and fills the answers into its own arrays: the execution graph
// (planner/language/execution_graph.hpp: timing, steady-state period, the validator's deadlock
// check and the simulator), the validator's order and placement checks, the lowering, the list
// scheduler, the order search and the exact planner. Header-inline: the planners call them once per
// edge.
//
// Concepts:
//  - Chunk: one (owner, virtual stage, micro-batch). Its F runs on the worker the routes name;
//    its I, W (or fused B) run on the worker that ran the F, which holds the activations.
//  - Data input: what a compute action needs before it can start (data_inputs). An input made on
//    another worker arrives through a SEND on the producer's worker paired with a RECV on the
//    consumer's (partner, output_of).
//  - Streams: a worker runs F, I, W, B, REDUCE_GRAD and OPT in list order on its compute stream,
//    and SEND/RECV in list order on its communication stream (stream_of).
//  - Memory: a chunk's activations are held from its F until its W (or B) (held_delta).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "planner/language/action.hpp"

namespace recycle::planner {

/// The actions that belong to one (owner, virtual stage, micro-batch) chunk.
enum class ChunkAction : std::uint8_t { kF, kI, kW, kB, kSendF, kRecvF, kSendB, kRecvB };
inline constexpr std::size_t kChunkActionCount = 8;

/// The chunk action of `type`, or nullopt for REDUCE_GRAD and OPT.
[[nodiscard]] constexpr std::optional<ChunkAction> chunk_action(ActionType type) noexcept {
  switch (type) {
    case ActionType::kForward:
      return ChunkAction::kF;
    case ActionType::kBackwardInput:
      return ChunkAction::kI;
    case ActionType::kBackwardWeight:
      return ChunkAction::kW;
    case ActionType::kBackward:
      return ChunkAction::kB;
    case ActionType::kSendF:
      return ChunkAction::kSendF;
    case ActionType::kRecvF:
      return ChunkAction::kRecvF;
    case ActionType::kSendB:
      return ChunkAction::kSendB;
    case ActionType::kRecvB:
      return ChunkAction::kRecvB;
    default:
      return std::nullopt;
  }
}

/// Which of its worker's two streams an action runs on.
enum class Stream : std::uint8_t { kCompute, kComm };

[[nodiscard]] constexpr Stream stream_of(ActionType type) noexcept {
  switch (type) {
    case ActionType::kSendF:
    case ActionType::kRecvF:
    case ActionType::kSendB:
    case ActionType::kRecvB:
      return Stream::kComm;
    default:
      return Stream::kCompute;
  }
}

/// What produced a data input.
enum class Producer : std::uint8_t {
  kForward,   ///< the chunk's F
  kGradient,  ///< the chunk's input gradient: its I, or its fused B
};

struct DataInput {
  Producer producer = Producer::kForward;
  std::int32_t virtual_stage = 0;
  /// Held on the consumer's own worker (activations, or the I a W finishes); otherwise it may be
  /// made on another worker and arrive through a SEND/RECV pair.
  bool same_worker = false;

  friend constexpr bool operator==(const DataInput&, const DataInput&) = default;
};

struct DataInputs {
  std::array<DataInput, 2> inputs{};
  std::int32_t count = 0;

  [[nodiscard]] constexpr const DataInput* begin() const noexcept { return inputs.data(); }
  [[nodiscard]] constexpr const DataInput* end() const noexcept { return inputs.data() + count; }
};

/// Rules 1-3 of docs/architecture.md for a compute action at `virtual_stage` of a layout whose
/// last virtual stage is `last`:
///  F(v) needs F(v-1);
///  I(v) and B(v) need F(v) on their own worker and the gradient of I/B(v+1) (none at the last);
///  W(v) needs I(v) on its own worker.
/// Listed in the order they are made (the last one completes the action's inputs). Empty for
/// non-compute actions.
[[nodiscard]] constexpr DataInputs data_inputs(ActionType type, std::int32_t virtual_stage,
                                               std::int32_t last) noexcept {
  DataInputs out;
  const auto add = [&out](Producer producer, std::int32_t v, bool same_worker) {
    out.inputs[static_cast<std::size_t>(out.count++)] = {producer, v, same_worker};
  };
  switch (type) {
    case ActionType::kForward:
      if (virtual_stage > 0) add(Producer::kForward, virtual_stage - 1, false);
      break;
    case ActionType::kBackwardInput:
    case ActionType::kBackward:
      add(Producer::kForward, virtual_stage, true);
      if (virtual_stage < last) add(Producer::kGradient, virtual_stage + 1, false);
      break;
    case ActionType::kBackwardWeight:
      add(Producer::kGradient, virtual_stage, true);
      break;
    default:
      break;
  }
  return out;
}

/// Iterations across lists (Action::lag: 1 marks the previous iteration's action listed in this
/// one). A data input made by an action of lag `producer_lag` reaches a consumer of lag
/// `consumer_lag` from this many iterations back: 0 in the same list, 1 from the list before.
/// Negative: the consumer would read data of a later iteration, which no schedule can (the
/// validator refuses it). A SEND/RECV carries its producer's lag (or one more, listed in the list
/// after it), so the consumer's distance from its RECV is counted the same way.
[[nodiscard]] constexpr std::int32_t data_distance(std::int32_t consumer_lag,
                                                   std::int32_t producer_lag) noexcept {
  return consumer_lag - producer_lag;
}

/// The weights a forward reads: those of the OPT `versions` iterations before its own (1: the
/// previous step, every synchronous schedule; 2: PipeDream-2BW's double buffering, where
/// micro-batch k of a batch of m uses version max(floor((k-1)/m) - 1, 0)). With their lags, that
/// OPT runs this many lists before the forward's on the same worker: at least 1 is met by the
/// worker's stream (its lists run one after another); 0 means the OPT must come earlier in the same
/// list. A backward uses the weights its forward used.
[[nodiscard]] constexpr std::int32_t weights_distance(std::int32_t forward_lag,
                                                      std::int32_t opt_lag,
                                                      std::int32_t versions) noexcept {
  return forward_lag + versions - opt_lag;
}

/// Whether a compute action of `type` is the producer `producer` of its chunk (a W produces
/// nothing another action needs; a B is the gradient producer as its I would be).
[[nodiscard]] constexpr bool produces(ActionType type, Producer producer) noexcept {
  return producer == Producer::kForward
             ? type == ActionType::kForward
             : type == ActionType::kBackwardInput || type == ActionType::kBackward;
}

/// A compute action that reads what another makes.
struct DataConsumer {
  ActionType type = ActionType::kForward;
  std::int32_t virtual_stage = 0;
  bool same_worker = false;  ///< held on the maker's worker (else it may arrive by a transfer)
  /// This input is the consumer's last to be made: a backward's gradient comes from the stage
  /// after it, whose F followed this stage's, so it is made after the backward's own activations.
  bool completes = false;
};

struct DataConsumers {
  std::array<DataConsumer, 4> consumers{};
  std::int32_t count = 0;

  [[nodiscard]] constexpr const DataConsumer* begin() const noexcept { return consumers.data(); }
  [[nodiscard]] constexpr const DataConsumer* end() const noexcept {
    return consumers.data() + count;
  }
};

/// Who reads what a compute action of `type` at `virtual_stage` makes, read off data_inputs
/// (rules 1-3 in the other direction, not a second copy of them): every compute action at the
/// same or a neighbouring virtual stage one of whose inputs this action produces. F(v): F(v+1),
/// I(v), B(v); I(v): I(v-1), B(v-1), W(v); B(v): I(v-1), B(v-1) (and a W(v) that a fused B
/// never has); W: nobody.
[[nodiscard]] constexpr DataConsumers consumers_of(ActionType type, std::int32_t virtual_stage,
                                                   std::int32_t last) noexcept {
  DataConsumers out;
  constexpr std::array<ActionType, 4> kComputes{ActionType::kForward, ActionType::kBackwardInput,
                                                ActionType::kBackwardWeight, ActionType::kBackward};
  for (std::int32_t v = virtual_stage - 1; v <= virtual_stage + 1; ++v) {
    if (v < 0 || v > last) continue;
    for (const ActionType consumer : kComputes) {
      const DataInputs inputs = data_inputs(consumer, v, last);
      for (std::int32_t k = 0; k < inputs.count; ++k) {
        const DataInput& in = inputs.inputs[static_cast<std::size_t>(k)];
        if (in.virtual_stage != virtual_stage || !produces(type, in.producer)) continue;
        out.consumers[static_cast<std::size_t>(out.count++)] = {consumer, v, in.same_worker,
                                                                k == inputs.count - 1};
      }
    }
  }
  return out;
}

/// The send that carries what a compute action at `virtual_stage` produces to the next consumer
/// in the chain, when that consumer may sit on another worker: F(v) -> SEND_F(v) for v < last
/// (read by F(v+1)), I/B(v) -> SEND_B(v) for v > 0 (read by I/B(v-1)). nullopt otherwise.
[[nodiscard]] constexpr std::optional<Action> output_of(const Action& compute,
                                                        std::int32_t last) noexcept {
  Action send = compute;
  if (compute.type == ActionType::kForward && compute.virtual_stage < last) {
    send.type = ActionType::kSendF;
    return send;
  }
  if ((compute.type == ActionType::kBackwardInput || compute.type == ActionType::kBackward) &&
      compute.virtual_stage > 0) {
    send.type = ActionType::kSendB;
    return send;
  }
  return std::nullopt;
}

/// The other side of a transfer: SEND_F(v) <-> RECV_F(v+1), SEND_B(v) <-> RECV_B(v-1), same owner
/// and micro-batch. Only for SEND/RECV actions.
[[nodiscard]] constexpr Action partner(const Action& comm) noexcept {
  Action other = comm;
  switch (comm.type) {
    case ActionType::kSendF:
      other.type = ActionType::kRecvF;
      ++other.virtual_stage;
      break;
    case ActionType::kRecvF:
      other.type = ActionType::kSendF;
      --other.virtual_stage;
      break;
    case ActionType::kSendB:
      other.type = ActionType::kRecvB;
      --other.virtual_stage;
      break;
    case ActionType::kRecvB:
      other.type = ActionType::kSendB;
      ++other.virtual_stage;
      break;
    default:
      break;
  }
  return other;
}

/// The compute a SEND/RECV belongs to on its own worker, at the same virtual stage: SEND_F sends
/// and RECV_F feeds the F; SEND_B sends and RECV_B feeds the gradient (I or B).
[[nodiscard]] constexpr Producer comm_compute(ActionType comm) noexcept {
  return comm == ActionType::kSendF || comm == ActionType::kRecvF ? Producer::kForward
                                                                  : Producer::kGradient;
}

/// The RECV that brings a remote data input to its consumer at `virtual_stage`: RECV_F for the F
/// of the previous stage, RECV_B for the gradient of the next.
[[nodiscard]] constexpr ActionType recv_for(Producer producer) noexcept {
  return producer == Producer::kForward ? ActionType::kRecvF : ActionType::kRecvB;
}

/// A split-backward compute action's place among F, I and W (0, 1, 2): how the planners number the
/// three actions of a chunk; -1 for every other action (a fused B included).
[[nodiscard]] constexpr std::int32_t split_index(ActionType type) noexcept {
  switch (type) {
    case ActionType::kForward:
      return 0;
    case ActionType::kBackwardInput:
      return 1;
    case ActionType::kBackwardWeight:
      return 2;
    default:
      return -1;
  }
}

/// Activations held by a worker change by this much when the action runs: +1 chunk at F, -1 at W
/// or B (the chunk's last use of them).
[[nodiscard]] constexpr std::int32_t held_delta(ActionType type) noexcept {
  if (type == ActionType::kForward) return 1;
  if (type == ActionType::kBackwardWeight || type == ActionType::kBackward) return -1;
  return 0;
}

/// Chunks of activations a worker holds when its list starts: those whose F ran in the list before
/// and whose W or B is listed here with lag 1 (a lagged W/B counts one, a lagged F takes one back:
/// that chunk's F and W are both in this list). 0 for a list without lags.
[[nodiscard]] constexpr std::int32_t held_at_start(const Action* first,
                                                   const Action* last) noexcept {
  std::int32_t held = 0;
  for (const Action* a = first; a != last; ++a) {
    if (a->lag != 0) held -= held_delta(a->type);
  }
  return held;
}

/// The most chunks of activations a list holds at once, those it starts with included.
[[nodiscard]] constexpr std::int32_t peak_held(const Action* first, const Action* last) noexcept {
  std::int32_t held = held_at_start(first, last), peak = held;
  for (const Action* a = first; a != last; ++a) peak = std::max(peak, held += held_delta(a->type));
  return peak;
}

/// A memory limit of `microbatches` micro-batches of activations, counted in chunks: a worker
/// that runs `interleave` model chunks holds one chunk of each micro-batch per model chunk, so a
/// micro-batch is `interleave` chunks (the validator, the planners and the flags all count so).
[[nodiscard]] constexpr std::int64_t chunk_limit(std::int32_t microbatches,
                                                 std::int32_t interleave) noexcept {
  return std::int64_t{microbatches} * interleave;
}

}  // namespace recycle::planner
