// recycle profile: profiles from first principles (docs/profiles.md) or from measurement
// (docs/validation.md). `profile synth` turns a job file into the recycle.profile/1 every other
// command reads; `profile measure` times the executor's workload on this machine and writes the
// same format; `profile show` prints a profile as a table: per stage F, I, W and optimizer
// seconds, bytes, and memory headroom.
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/parallel.hpp"
#include "executor/measure.hpp"
#include "planner/job_model.hpp"
#include "planner/timing/memory.hpp"
#include "profiles/job.hpp"
#include "profiles/profile.hpp"
#include "tools/backends.hpp"
#include "tools/command.hpp"
#include "tools/job_measure.hpp"
#include "tools/whole_range.hpp"
#include "tools/workload_options.hpp"

namespace recycle::tools {

namespace {

struct ProfileOptions {
  std::string job;
  std::string output = "-";
  std::string show;
  std::string backend = "cpu";
  std::int32_t pp = 1;
  std::int32_t dp = 2;
  executor::StageShape shape;
  std::int32_t repetitions = 20;
};

std::string ms(Nanos ns) {
  return fmt::format("{:.2f}", to_seconds(ns) * 1e3);
}

/// The table of `profile show`. Headroom: what a worker has left when it holds its state and the
/// activations of pp - s micro-batches, the most 1F1B keeps on stage s.
std::string show_table(const profiles::Profile& p) {
  const auto pp = static_cast<Bytes>(p.stages.size());
  const Bytes worker = p.worker_memory();
  std::string out = fmt::format("{}: {} stages, tensor parallel {}, {} per worker\n",
                                p.name.empty() ? "profile" : p.name, pp, p.tensor_parallel,
                                worker > 0 ? planner::format_gb(worker) : "memory not given");
  out += fmt::format("{:>5} {:>10} {:>10} {:>10} {:>10} {:>12} {:>11} {:>11} {:>11} {:>12}\n",
                     "stage", "F ms", "I ms", "W ms", "opt ms", "activations", "output", "params",
                     "opt state", "headroom");
  for (Bytes s = 0; s < pp; ++s) {
    const profiles::StageProfile& st = p.stages[static_cast<std::size_t>(s)];
    const Bytes state = 2 * st.param_bytes + st.optimizer_state_bytes;
    const Bytes held = state + (pp - s) * st.activation_bytes;
    const std::string headroom = worker <= 0      ? "-"
                                 : held <= worker ? planner::format_gb(worker - held)
                                                  : "-" + planner::format_gb(held - worker);
    out += fmt::format("{:>5} {:>10} {:>10} {:>10} {:>10} {:>12} {:>11} {:>11} {:>11} {:>12}\n", s,
                       ms(st.forward), ms(st.backward_input), ms(st.backward_weight),
                       ms(st.optimizer), planner::format_gb(st.activation_bytes),
                       planner::format_gb(st.output_bytes), planner::format_gb(st.param_bytes),
                       planner::format_gb(st.optimizer_state_bytes), headroom);
  }
  if (p.loss > 0) {
    out += fmt::format("loss {} ms per micro-batch, added to the last virtual stage's I\n",
                       ms(p.loss));
  }
  out +=
      "activations and output: per micro-batch, whole worker; params: the stage's weights as the "
      "profile stores them (16-bit when synthesized, fp32 when measured), and as many bytes of "
      "gradients; headroom: with 1F1B's pp - s micro-batches in flight\n";
  return out;
}

}  // namespace

Command add_profile_command(CLI::App& app) {
  auto o = std::make_shared<ProfileOptions>();
  CLI::App* sub = app.add_subcommand(
      "profile",
      "Profiles: synthesize one from a job file, measure the executor's workload, or show one");
  sub->require_subcommand(1);
  sub->footer(
      examples({"recycle profile synth --job job.json -o profile.json",
                "recycle profile measure --backend cpu --pp 2 --width 1024 -o measured.json",
                "recycle profile show profile.json", "recycle profile show --job job.json"}));
  CLI::App* synth = sub->add_subcommand(
      "synth", "Write the recycle.profile/1 of a job (model + hardware + parallel configuration)");
  synth->add_option("--job", o->job, "Job JSON (docs/profiles.md)")->required();
  add_output(*synth, "-o,--output", o->output, "Write the profile to FILE instead of stdout");
  synth->footer(examples({"recycle profile synth --job job.json -o profile.json",
                          "recycle simulate --schedule zb-h1 --pp 8 --microbatches 64 --profile "
                          "profile.json"}));
  CLI::App* measure = sub->add_subcommand(
      "measure",
      "Time the executor's workload (F, I, W, optimizer step, hand-off between workers) on this "
      "machine and write it as a recycle.profile/1");
  measure->add_option("--backend", o->backend, "cpu (default), or cuda: the layers timed on GPU 0");
  measure->add_option("--pp", o->pp, "Stages to write (every one the same; default 1)")
      ->check(whole_range(1, 1024));
  measure
      ->add_option("--dp", o->dp,
                   "Replicas of each stage whose gradient all-reduce is timed (default 2)")
      ->check(whole_range(2, 1024));
  add_shape_options(*measure, o->shape);
  add_repetitions_option(*measure, o->repetitions);
  add_output(*measure, "-o,--output", o->output, "Write the profile to FILE instead of stdout");
  CLI::Option* measure_job_option = measure->add_option(
      "--job", o->job,
      "Time one layer of the job's model (its GPT or Llama block at the job's width, heads, "
      "key/value heads, MLP, sequence and micro-batch size; with tp above 1 one tensor-parallel "
      "rank's share of it), write the "
      "job's pipeline profile to -o FILE and print the layer's F, I and W against the "
      "synthesizer's prediction for it");
  for (const char* shaped : {"--pp", "--dp", "--width", "--layers-per-stage", "--microbatch-size",
                             "--block", "--sequence", "--heads", "--kv-heads"})
    measure_job_option->excludes(measure->get_option(shaped));
  measure->footer(examples(
      {"recycle profile measure --pp 2 --width 1024 --microbatch-size 64 -o cpu.json",
       "recycle simulate --schedule 1f1b --pp 2 --microbatches 8 --profile cpu.json",
       "recycle profile measure --backend cuda --job gpt3-1.3b-job.json -o measured.json"}));
  CLI::App* show = sub->add_subcommand(
      "show", "Print a profile (or a job's synthesized profile) as a table per stage");
  show->add_option("file", o->show, "Profile JSON")->required();
  show->add_option("--job", o->job, "Show the profile synthesized from this job instead")
      ->excludes(show->get_option("file"));
  show->footer(examples({"recycle profile show profile.json"}));
  // --job makes the positional FILE optional.
  show->get_option("file")->required(false);
  return {sub, [o, synth, measure] {
            if (measure->parsed() && !o->job.empty()) {
              const Backend backend = parse_backend(o->backend);
              if (o->output == "-")
                throw InputError("--output",
                                 "give a FILE with --job: the comparison goes to stdout");
              const profiles::Job job = profiles::load_job(o->job);
              const JobMeasurement m = measure_job(job, backend, o->repetitions);
              write_text_file(o->output, profiles::to_json(m.profile).dump(2) + "\n");
              std::fputs(m.table.c_str(), stdout);
              return kExitOk;
            }
            if (measure->parsed()) {
              const Backend backend = parse_backend(o->backend);
              const profiles::Profile p =
                  measure_profile(backend, o->shape, o->pp, o->dp, o->repetitions);
              write_text_file(o->output, profiles::to_json(p).dump(2) + "\n");
              return kExitOk;
            }
            if (synth->parsed()) {
              const planner::JobModel own = planner::job_model(profiles::load_job(o->job));
              planner::require_runnable(own);
              write_text_file(o->output, profiles::to_json(own.synthesis.profile).dump(2) + "\n");
              return kExitOk;
            }
            if (o->show.empty() && o->job.empty())
              throw InputError("profile show", "give a profile FILE or --job FILE");
            profiles::Profile p;
            if (o->job.empty()) {
              p = profiles::load_profile(o->show);
            } else {
              const planner::JobModel own = planner::job_model(profiles::load_job(o->job));
              planner::require_runnable(own);
              p = own.synthesis.profile;
            }
            std::fputs(show_table(p).c_str(), stdout);
            return kExitOk;
          }};
}

}  // namespace recycle::tools
