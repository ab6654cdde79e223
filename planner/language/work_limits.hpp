// How large one schedule, simulation, drawing or replay may be, estimated from the layout before
// any work starts (planner/planning_work.hpp bounds the planning), so that every
// layout the flags accept either runs on a 24 GB machine within minutes of one core or is refused
// up front with the estimate and the limit (docs/cli.md, "Limits and what happens past them").
//
// The unit is the chunk: one (pipeline, virtual stage, micro-batch) of a schedule, which is one F,
// one I and one W. Measured on the reference machine (Release build, one core): a schedule of 2^23
// chunks (pp 64, dp 512, 256 micro-batches) takes 8.4 GB and 48 s to plan with ReCycle and lower,
// and 9.3 GB and 29 s to simulate for two iterations; memory and time grow linearly in chunks.
#pragma once

#include <cstdint>
#include <string>

#include "planner/language/schedule.hpp"

namespace recycle::planner {

/// Most chunks in one schedule.
inline constexpr std::int64_t kMaxChunks = std::int64_t{1} << 23;

/// Most chunk-iterations one simulation keeps: chunks x (iterations + 4). Measured (one core):
/// a simulation takes about 730 bytes a chunk plus 216 a chunk and iteration (pp 64 x dp 256 x
/// 256 micro-batches: 4.9 GB for 2 iterations, 10.3 GB for 8), so the limit is about 15 GB.
inline constexpr std::int64_t kMaxSimulatedChunks = std::int64_t{1} << 26;
/// Most chunk-iterations drawn into a Chrome trace or an SVG (about 6 events of 100-odd bytes
/// each).
inline constexpr std::int64_t kMaxTracedChunks = std::int64_t{1} << 20;

/// Most replay work: events replayed x chunks of the job's layout, each event possibly a new
/// failure set to plan for. The 16,384-GPU benchmark (30 days of 2,048 nodes, pp 16 x dp 128 x 16
/// micro-batches) is about 500 events x 32,768 chunks = 2^24 and takes about 10 s on one core, so
/// the limit, 16 times that, is a few minutes.
inline constexpr std::int64_t kMaxReplayWork = std::int64_t{1} << 28;

/// dp x pp x interleave x microbatches.
[[nodiscard]] std::int64_t chunks(const Layout& layout) noexcept;

/// Refuses a layout of more than kMaxChunks chunks: InputError naming `where` (the flags, or the
/// file that gave the layout) with the count and the limit.
void require_chunks(const Layout& layout, const std::string& where);

/// Refuses simulating `iterations` iterations of `layout` past kMaxSimulatedChunks: InputError
/// naming --iterations with the largest count that fits.
void require_simulation(const Layout& layout, std::int32_t iterations);

/// Refuses drawing `iterations` iterations of `layout` past kMaxTracedChunks: InputError naming
/// `flag` (--chrome-trace, --svg), suggesting --trace-iteration.
void require_traced(const Layout& layout, std::int32_t iterations, const std::string& flag);

/// Refuses replaying `events` trace events on a job of `layout` past kMaxReplayWork: InputError
/// naming --trace (and --days, which shortens it) with the estimate and the limit.
void require_replay_work(std::int64_t events, const Layout& layout);

}  // namespace recycle::planner
