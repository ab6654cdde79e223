#include "tools/layout_options.hpp"
#include "tools/whole_range.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/parse.hpp"
#include "planner/generators.hpp"
#include "planner/language/work_limits.hpp"
#include "planner/timing/profile_costs.hpp"

namespace recycle::tools {

void LayoutOptions::add_layout_to(CLI::App& app) {
  app.add_option("--pp", pp, "Pipeline stages")->check(whole_range(1, planner::kMaxPp));
  app.add_option("--microbatches", microbatches, "Micro-batches per pipeline per iteration")
      ->check(whole_range(1, planner::kMaxMicrobatches));
  app.add_option("--dp", dp, "Data-parallel pipelines (default 1)")
      ->check(whole_range(1, planner::kMaxDp));
  app.add_option("--interleave", interleave,
                 "Model chunks per worker, for the interleaved schedule (default 1)")
      ->check(whole_range(1, planner::kMaxInterleave));
}

void LayoutOptions::add_to(CLI::App& app) {
  add_layout_to(app);
  auto* c =
      app.add_option("--costs", costs,
                     "Seconds per F, I and W of one micro-batch on every (virtual) stage: F,I,W");
  auto* p =
      app.add_option("--profile", profile, "Profile JSON with per-stage costs (docs/formats.md)");
  c->excludes(p);
  auto* j = app.add_option("--job", job,
                           "Job JSON: model, hardware, parallel configuration and schedule; the "
                           "profile is synthesized from it (docs/profiles.md)");
  j->excludes(c)->excludes(p);
  for (const char* flag : {"--pp", "--microbatches", "--dp", "--interleave"})
    j->excludes(app.get_option(flag));
}

const profiles::Job* LayoutOptions::loaded_job() const {
  if (job.empty()) return nullptr;
  if (!job_) job_ = profiles::load_job(job);
  return &*job_;
}

template <class Make>
RunModel LayoutOptions::kept(const std::string& key, Make make) const {
  auto it = models_.find(key);
  if (it == models_.end()) it = models_.emplace(key, make()).first;
  return {it->second.layout, it->second.model, &it->second};
}

RunModel LayoutOptions::resolve(std::string_view schedule) const {
  if (const profiles::Job* j = loaded_job()) {
    const std::string name(schedule.empty() ? std::string_view(j->schedule) : schedule);
    return kept(name, [&] {
      planner::JobModel m = planner::job_model(*j, name);
      planner::require_runnable(m);
      return m;
    });
  }
  const planner::Layout placed = planner::layout_for(schedule, layout());
  return {placed, flags_model(placed), nullptr};
}

RunModel LayoutOptions::resolve(const planner::Layout& file_layout, const std::string& file) const {
  if (const profiles::Job* j = loaded_job()) {
    return kept("file " + file, [&] { return planner::job_model(*j, file_layout, file); });
  }
  return {file_layout, flags_model(file_layout), nullptr};
}

std::string LayoutOptions::cost_source() const {
  if (!job.empty()) return job;
  return profile.empty() ? "--costs" : "--profile";
}

void LayoutOptions::require_time(Nanos iteration_time) const {
  if (iteration_time > 0) return;
  throw InputError(
      cost_source(),
      "every action takes no time, so an iteration takes none and throughput is undefined");
}

void LayoutOptions::add_network_to(CLI::App& app) {
  app.add_option("--network", network,
                 "How transfers run: runtime (each worker's SEND/RECV in list order on one "
                 "stream, rendezvous; default), eager (sends do not wait for the receive), "
                 "direct (only each transfer's time: Zero Bubble's model)")
      ->check(CLI::IsMember({"runtime", "eager", "direct"}));
}

planner::RunOptions LayoutOptions::run_options() const {
  planner::RunOptions options;
  options.network = network == "direct" ? planner::Network::kDirect : planner::Network::kRuntime;
  options.eager_sends = network == "eager";
  return options;
}

planner::Layout LayoutOptions::layout() const {
  if (const profiles::Job* j = loaded_job()) {
    return planner::job_layout(*j);
  }
  if (pp == 0) throw InputError("--pp", "required");
  if (microbatches == 0) throw InputError("--microbatches", "required");
  const planner::Layout out{dp, pp, microbatches, interleave};
  planner::require_chunks(out, "--dp x --pp x --interleave x --microbatches");
  return out;
}

const profiles::Profile* LayoutOptions::flags_profile() const {
  if (profile.empty()) return nullptr;
  if (!profile_) profile_ = profiles::load_profile(profile);
  return &*profile_;
}

planner::Costs LayoutOptions::costs_for(const planner::Layout& layout) const {
  if (const profiles::Profile* p = flags_profile())
    return planner::costs_from_profile(*p, layout, profile);
  planner::StageCost cost{kNanosPerSecond, kNanosPerSecond, kNanosPerSecond};
  if (!costs.empty()) {
    const auto parts = split(costs, ',');
    if (parts.size() != 3) {
      throw InputError("--costs", "expected three numbers F,I,W in seconds, got '" + costs + "'");
    }
    Nanos values[3];
    for (std::size_t i = 0; i < 3; ++i) {
      const double s = parse_double(parts[i], "--costs");
      if (s < 0 || s > 1e6)
        throw InputError("--costs",
                         "expected seconds in [0, 1e6], got '" + std::string(parts[i]) + "'");
      values[i] = to_nanos(s);
      if (s > 0 && values[i] == 0) {
        throw InputError("--costs", "'" + std::string(parts[i]) +
                                        "' seconds rounds to 0 ns: simulated time counts whole "
                                        "nanoseconds; give 0 or at least 1e-9");
      }
    }
    cost = {values[0], values[1], values[2]};
  }
  return planner::Costs::uniform(layout.virtual_stages(), cost);
}

planner::CostModel LayoutOptions::flags_model(const planner::Layout& layout) const {
  if (const profiles::Profile* p = flags_profile())
    return planner::CostModel::from_profile(*p, layout, profile);
  return planner::CostModel::compute_only(costs_for(layout));
}

void PlacementOption::add_to(CLI::App& app) {
  app.add_option("--placement", value,
                 "Which stage runs each virtual stage of a schedule file: loop (v on v % pp) or v "
                 "(odd chunks reversed, as ZB-V and DualPipe-V); default: the file's")
      ->check(CLI::IsMember({"loop", "v"}));
}

std::optional<planner::Placement> PlacementOption::placement() const {
  if (value.empty()) return std::nullopt;
  return value == "v" ? planner::Placement::kV : planner::Placement::kLoop;
}

std::string fmt_microbatches(std::int32_t chunks, std::int32_t interleave) {
  return fmt::format("{:g}", static_cast<double>(chunks) / static_cast<double>(interleave));
}

}  // namespace recycle::tools
