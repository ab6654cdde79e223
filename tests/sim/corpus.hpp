// The schedules the simulator tests run on a real network: every generator (with and without a
// staggered optimizer), interleaved, and ReCycle plans and the naive re-route around 0, 1 and 2
// failed workers, on tests/sim/data/four_stages.json (four uneven stages, two workers per node).
#pragma once

#include <string>
#include <vector>

#include "planner/generators.hpp"
#include "planner/recycle_planner.hpp"
#include "profiles/profile.hpp"

namespace recycle::sim_test {

inline planner::CostModel four_stages(const planner::Layout& layout) {
  const auto profile =
      profiles::load_profile(std::string(RECYCLE_SOURCE_DIR) + "/tests/sim/data/four_stages.json");
  return planner::CostModel::from_profile(profile, layout, "four_stages.json");
}

struct Named {
  std::string name;
  planner::Schedule schedule;
};

inline std::vector<Named> corpus(const planner::CostModel& model, const planner::Layout& layout) {
  std::vector<Named> out;
  for (const std::string name : {"gpipe", "1f1b", "zb-h1", "zb-h2"}) {
    for (const bool staggered : {false, true}) {
      planner::GeneratorOptions gen;
      gen.layout = layout;
      gen.model = model;
      gen.staggered_optimizer = staggered;
      out.push_back(
          {name + (staggered ? " staggered" : ""), planner::generate_fault_free(name, gen)});
    }
  }
  planner::GeneratorOptions interleaved;
  interleaved.layout = {layout.dp, layout.pp, layout.microbatches, 2};
  out.push_back({"interleaved", planner::generate_fault_free("interleaved", interleaved)});
  for (const std::vector<planner::WorkerId>& failed :
       std::vector<std::vector<planner::WorkerId>>{{}, {{1, 2}}, {{0, 1}, {2, 3}}}) {
    for (const bool staggered : {false, true}) {
      planner::RecycleOptions options;
      options.layout = layout;
      options.failed = failed;
      options.model = model;
      options.staggered_optimizer = staggered;
      out.push_back({"recycle, " + std::to_string(failed.size()) + " failed" +
                         (staggered ? " staggered" : ""),
                     planner::plan_recycle(options).schedule});
    }
    if (!failed.empty())
      out.push_back({"naive re-route", planner::plan_naive_reroute(layout, failed).schedule});
  }
  return out;
}

}  // namespace recycle::sim_test
