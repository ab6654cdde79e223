// A job's profile with its chunks where its schedule puts them (planner/job_model.hpp).
#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "core/json.hpp"
#include "planner/job_model.hpp"
#include "profiles/job.hpp"

namespace {

using namespace recycle;

profiles::Job gpt3(const std::string& schedule, int interleave) {
  // 96 layers over 8 stages of 2 chunks: 6 layers a chunk, 12 a stage, whatever the placement.
  const std::string text = R"({"model": "gpt3-175b", "hardware": "a100-80g", "parallel": {"tp": 8,
      "pp": 8, "dp": 2, "interleave": )" +
                           std::to_string(interleave) +
                           R"(, "microbatch_size": 1, "global_batch": 32}, "schedule": ")" +
                           schedule + R"("})";
  return profiles::job_from_json(parse_json(text, "job.json"), "job.json");
}

}  // namespace

TEST_CASE("a V-shaped schedule's profile has the output layer on stage 0, with the embedding") {
  // The loop (interleaved, 2 chunks): the embedding on stage 0's first chunk, the output layer
  // on stage 7's second. The V (ZB-V, DualPipe-V): chunk 1 runs from stage 7 back to stage 0,
  // so the last virtual stage, with the output layer, is on stage 0. The layers are the same
  // (6 a chunk), so stage 0 of the V is the loop's stage 0 plus what the output layer adds to
  // the loop's stage 7 (its excess over a stage of layers alone, stage 1), and the V's stage 7
  // is a stage of layers alone.
  const profiles::Profile loop = planner::job_model(gpt3("interleaved", 2)).synthesis.profile;
  for (const std::string schedule : {"zb-v", "dualpipe-v"}) {
    CAPTURE(schedule);
    for (const int interleave : {1, 2}) {  // a V-shaped schedule takes 2 chunks either way
      CAPTURE(interleave);
      const profiles::Profile v = planner::job_model(gpt3(schedule, interleave)).synthesis.profile;
      REQUIRE(v.stages.size() == 8);
      const auto& l0 = loop.stages[0];
      const auto& l1 = loop.stages[1];
      const auto& l7 = loop.stages[7];
      CHECK(v.stages[0].forward == l0.forward + (l7.forward - l1.forward));
      CHECK(v.stages[0].backward_input ==
            l0.backward_input + (l7.backward_input - l1.backward_input));
      CHECK(v.stages[0].backward_weight ==
            l0.backward_weight + (l7.backward_weight - l1.backward_weight));
      CHECK(v.stages[0].param_bytes == l0.param_bytes + (l7.param_bytes - l1.param_bytes));
      CHECK(v.stages[0].activation_bytes ==
            l0.activation_bytes + (l7.activation_bytes - l1.activation_bytes));
      CHECK(v.stages[7].forward == l1.forward);
      CHECK(v.stages[7].param_bytes == l1.param_bytes);
      CHECK(v.stages[7].activation_bytes == l1.activation_bytes);
    }
  }
  // A loop-placed schedule keeps the output layer on the last stage.
  const profiles::Profile one = planner::job_model(gpt3("1f1b", 1)).synthesis.profile;
  CHECK(one.stages[7].forward > one.stages[1].forward);
}

TEST_CASE("--schedule over a job's own gives the model of a job file with that schedule") {
  // The bug this guards: a job synthesized once for its file's schedule and reused for another
  // (a V-shaped one timed with the output layer on the last stage).
  for (const std::string name :
       {"gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2", "zb-v", "dualpipe-v", "recycle"}) {
    CAPTURE(name);
    const int interleave = name == "interleaved" ? 2 : 1;
    const planner::JobModel over = planner::job_model(gpt3("1f1b", interleave), name);
    const planner::JobModel own = planner::job_model(gpt3(name, interleave));
    CHECK(over.job.schedule == name);
    CHECK(over.layout == own.layout);
    CHECK(over.model.compute.virtual_stages == own.model.compute.virtual_stages);
    CHECK(over.model.param_bytes == own.model.param_bytes);
    CHECK(over.model.activation_bytes == own.model.activation_bytes);
  }
  // zb-v's layout: two chunks a worker in a V, whatever the file's interleave says (1 here).
  const planner::JobModel v = planner::job_model(gpt3("1f1b", 1), "zb-v");
  CHECK(v.layout.interleave == 2);
  CHECK(v.layout.placement == planner::Placement::kV);
}

TEST_CASE("a schedule file's layout must be the job's, but for its chunks") {
  const profiles::Job job = gpt3("1f1b", 1);
  planner::Layout placed{2, 8, 16, 2, planner::Placement::kV};
  const planner::JobModel m = planner::job_model(job, placed, "plan.json");
  CHECK(m.layout == placed);
  CHECK(m.synthesis.profile.stages[0].forward ==
        planner::job_model(job, "zb-v").synthesis.profile.stages[0].forward);
  placed.dp = 4;
  CHECK_THROWS_WITH_AS((void)planner::job_model(job, placed, "plan.json"),
                       doctest::Contains("plan.json: its layout (dp 4 x pp 8, 16 micro-batches) "
                                         "is not the job's (dp 2 x pp 8, 16 micro-batches"),
                       InputError);
}

TEST_CASE("require_runnable: the one check of a job every command makes, naming the job's field") {
  // GPT-3 175B at tp 8 x pp 8 x dp 2, 16 micro-batches a pipeline, on A100-80GB: every schedule
  // that runs on this layout is accepted (2bw with its second weight version included).
  for (const std::string name : {"gpipe", "1f1b", "zb-h1", "zb-h2", "2bw", "pipedream-flush",
                                 "recycle", "zb-v", "dualpipe-v"}) {
    CAPTURE(name);
    CHECK_NOTHROW(planner::require_runnable(planner::job_model(gpt3(name, 1))));
  }
  CHECK_NOTHROW(planner::require_runnable(planner::job_model(gpt3("interleaved", 2))));
  // A schedule its layout does not suit: as the job's field, with the value.
  CHECK_THROWS_WITH_AS(planner::require_runnable(planner::job_model(gpt3("1f1b", 2))),
                       "job.json: parallel.interleave 2: only the interleaved schedule splits a "
                       "stage into chunks; 1f1b needs --interleave 1",
                       InputError);
  CHECK_THROWS_WITH_AS(planner::require_runnable(planner::job_model(gpt3("interleaved", 1))),
                       doctest::Contains("parallel.interleave 1: the interleaved schedule needs "
                                         "at least 2 chunks per worker"),
                       InputError);
  // The same job with --schedule interleaved over its own runs.
  CHECK_NOTHROW(planner::require_runnable(planner::job_model(gpt3("1f1b", 2), "interleaved")));
  // An unknown name is refused as the file is read, by every reader alike.
  CHECK_THROWS_WITH_AS((void)gpt3("2f2b", 1),
                       "job.json: schedule: unknown schedule '2f2b', expected one of gpipe, "
                       "1f1b, interleaved, zb-h1, zb-h2, zb-v, dualpipe-v, 2bw, recycle",
                       InputError);
}
