// Fault-free schedule generators: pure functions of the layout (and, for the memory-aware ones,
// the costs, the limit and the optimizer mode). Each writes the compute-action order of one
// pipeline's stages; every pipeline runs the same order. planner/language/lower.hpp adds
// communication and the optimizer step.
//
//  gpipe        all forwards, then all backwards (B)
//  1f1b         warm-up of pp - s - 1 forwards on stage s, then one forward one backward
//               (Megatron-LM)
//  interleaved  Megatron-LM's interleaved 1F1B with V chunks per worker (needs M % PP == 0)
//  zb-h1        Zero Bubble H1 (Qi et al., ICLR 2024): 1F1B order with B split into I and W,
//               stage s defers its first s Ws so I runs early; peak activations as 1F1B
//  zb-h2        Zero Bubble H2: up to 2pp - 1 micro-batches of activations per worker (or the
//               memory limit given), ordered by the planners' candidates (planner/candidates.hpp)
//               for the shortest steady-state period under the schedule's optimizer mode. The
//               extra memory removes the (I - W) part of ZB-H1's bubble.
//  zb-v         Zero Bubble's ZB-V: two chunks per worker placed in a V (Placement::kV), split
//               backward, 1F1B's peak activations and a bubble of pp - 1 steps per stage when
//               F = I = W
//  dualpipe-v   DeepSeek-V3's DualPipe on one V (torch's ScheduleDualPipeV): two chunks in a V,
//               forward of one chunk paired with a full backward of the other; M >= 2pp
//  2bw          PipeDream-2BW (Narayanan et al., ICML '21): 1F1B without a flush, two weight
//               versions; a stage's last backwards of one batch run in the next iteration's list
//               (Action::lag), its step right after them; M >= pp - 1. `pipedream-flush` is the
//               paper's name for 1f1b.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/schedule_names.hpp"
#include "planner/language/schedule.hpp"
#include "planner/timing/cost_model.hpp"
#include "planner/timing/period.hpp"

namespace recycle::planner {

struct GeneratorOptions {
  Layout layout;
  /// Compute costs per virtual stage (may be empty for order-only generators) and the network.
  CostModel model;
  std::optional<std::int32_t> memory_limit;  ///< micro-batches of activations per worker
  bool staggered_optimizer = false;          ///< the optimizer mode the schedule runs under
  RunOptions run;                            ///< zb-h2: how it will run (OrderPlanOptions::run)
};

/// The layout generator `name` runs on: zb-v and dualpipe-v place two chunks per worker in a V
/// (interleave 1, the flag's default, becomes 2); any other layout is returned as it is, and
/// generate_fault_free says what is wrong with it.
[[nodiscard]] Layout layout_for(std::string_view name, Layout layout);

/// The fewest micro-batches per pipeline, `microbatches` or more, that generator `name` runs on
/// `layout`'s stages: the interleaved schedule (Megatron-LM's) takes them in groups of pp, so a
/// count between groups rounds up to the next whole group; the others take any count.
[[nodiscard]] std::int32_t runnable_microbatches(std::string_view name, const Layout& layout,
                                                 std::int32_t microbatches);

// The names generate_fault_free accepts, and their aliases: core/schedule_names.hpp.
using recycle::canonical_schedule_name;
using recycle::fault_free_generator_names;

/// A compute-only schedule (F, I, W, B) for every worker of the layout. Throws InputError naming
/// the flag (--schedule, --pp, --microbatches, --interleave, --memory-limit) when the layout does
/// not suit the generator.
[[nodiscard]] Schedule generate_fault_free(std::string_view name, const GeneratorOptions& options);

/// InputError naming the flag when generator `name` cannot run on `layout` (placed by
/// layout_for): an unknown name, sizes past the limits, a chunk count or placement the schedule
/// does not take, too few micro-batches (interleaved: a multiple of pp; 2bw: pp - 1; dualpipe-v:
/// 2 pp). generate_fault_free checks these first; a job file is checked by the same rule when it
/// is read (job_model.hpp require_runnable).
void require_runs(std::string_view name, const Layout& layout);

/// Per-stage orders with owner 0 (exposed for tests). `stage` is the physical stage.
[[nodiscard]] std::vector<Action> gpipe_order(const Layout& layout, std::int32_t stage);
[[nodiscard]] std::vector<Action> one_f_one_b_order(const Layout& layout, std::int32_t stage);
[[nodiscard]] std::vector<Action> interleaved_order(const Layout& layout, std::int32_t stage);
[[nodiscard]] std::vector<Action> zb_h1_order(const Layout& layout, std::int32_t stage);
[[nodiscard]] std::vector<Action> zb_v_order(const Layout& layout, std::int32_t stage);
[[nodiscard]] std::vector<Action> dualpipe_v_order(const Layout& layout, std::int32_t stage);
[[nodiscard]] std::vector<Action> two_bw_order(const Layout& layout, std::int32_t stage);
/// The fault-free orders a planner starts from on base schedule `name`, each one pipeline's (per
/// stage, owner 0) with every fused B split into I then W, as the planners order F, I and W:
/// 1f1b gives 1F1B split so and ZB-H1; interleaved, zb-v and dualpipe-v their own orders.
/// InputError (as generate_fault_free) when `layout` does not suit the generator (layout_for).
[[nodiscard]] std::vector<std::vector<std::vector<Action>>> base_orders(std::string_view name,
                                                                        const Layout& layout);
/// Per stage, the most chunks of activations `orders` hold at once: a base schedule's share of
/// memory.
[[nodiscard]] std::vector<std::int32_t> held_peaks(const std::vector<std::vector<Action>>& orders);
/// All stages at once: the order depends on the costs, the network and the optimizer mode.
/// `memory_limit` in micro-batches, per stage.
[[nodiscard]] std::vector<std::vector<Action>> zb_h2_orders(const Layout& layout,
                                                            const CostModel& model,
                                                            std::vector<std::int32_t> memory_limit,
                                                            bool staggered_optimizer,
                                                            const RunOptions& run = {});

}  // namespace recycle::planner
