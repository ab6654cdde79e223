// recycle: what failures cost a large training job, and what to do about it.
#include <cstdio>
#include <exception>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/allocator.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/log.hpp"
#include "planner/language/execution_graph.hpp"
#include "tools/backends.hpp"
#include "tools/command.hpp"
#if RECYCLE_HAVE_MPI
#include "executor/mpi/processes.hpp"
#endif

namespace recycle::tools {

std::string examples(std::initializer_list<std::string> lines) {
  std::string out = "\nExamples:\n";
  for (const auto& line : lines) out += "  " + line + "\n";
  return out;
}

namespace {

int print_error(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", one_line(message).c_str());
  return kExitBadInput;
}

/// Rules every subcommand follows, set once here rather than per option: the global flags (-q,
/// -v) are accepted after a subcommand too, as users type them; and no option that takes a value
/// accepts an empty one (`--costs ''` is a mistake, not the default).
void apply_common_rules(CLI::App& app) {
  const CLI::Validator non_empty(
      [](const std::string& value) {
        return value.empty() ? std::string("expected a value, got an empty string") : std::string();
      },
      "", "non-empty");
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_size() != 0) option->check(non_empty);
  }
  for (CLI::App* sub : app.get_subcommands({})) {
    sub->fallthrough();
    apply_common_rules(*sub);
  }
}

/// An error about a layout flag that the command line did not give, while the layout came from a
/// job file (--job): named after the job's field it came from, not a flag the user never typed
/// (or one the subcommand lacks). Any other error is left as it is.
/// The command (or its parsed subcommand: profile synth --job) that holds option `name`, when the
/// command line gave it; else null.
const CLI::App* given_in(const CLI::App& command, const std::string& name) {
  const auto given = [&](const CLI::App& app) {
    const CLI::Option* o = app.get_option_no_throw(name);
    return o != nullptr && o->count() > 0;
  };
  if (given(command)) return &command;
  for (const CLI::App* sub : command.get_subcommands()) {
    if (given(*sub)) return sub;
  }
  return nullptr;
}

InputError from_job(const CLI::App& command, const InputError& e) {
  const CLI::App* owner = given_in(command, "--job");
  if (owner == nullptr) return e;
  const CLI::App& app = *owner;
  const CLI::Option* job = app.get_option("--job");
  static const std::vector<std::pair<std::string, std::string>> kFields = {
      {"--pp", "parallel.pp"},
      {"--dp", "parallel.dp"},
      {"--interleave", "parallel.interleave"},
      {"--microbatches", "parallel.global_batch"},  // micro-batches = global / (dp x size)
      {"--dp x --pp x --interleave x --microbatches", "parallel"},
      {"--schedule", "schedule"},
      {"--profile", ""},  // the profile is synthesized from the job
  };
  for (const auto& [flag, field] : kFields) {
    if (e.where() != flag) continue;
    if (const CLI::Option* given = app.get_option_no_throw(flag); given && given->count() > 0)
      return e;
    const std::string file = job->as<std::string>();
    return InputError(field.empty() ? file : file + ": " + field, e.problem());
  }
  return e;
}

/// An error about a schedule the command made from its flags (a timing past the clock's end),
/// named after the cost input the command line gave: --costs, or the --profile or --job file.
InputError from_costs(const CLI::App& command, const InputError& e) {
  if (e.where() != recycle::planner::kUnnamedSchedule) return e;
  for (const char* name : {"--costs", "--profile", "--job"}) {
    const CLI::App* owner = given_in(command, name);
    if (owner == nullptr) continue;
    const std::string where =
        std::string(name) == "--costs" ? name : owner->get_option(name)->as<std::string>();
    return InputError(where, e.problem());
  }
  return e;
}

}  // namespace
}  // namespace recycle::tools

int main(int argc, char** argv) {
  using namespace recycle::tools;
  recycle::guard_standard_streams();
  recycle::keep_freed_memory();
#if RECYCLE_HAVE_MPI
  // Under mpirun, process 0 runs the command and the others serve its runs
  // (executor/mpi/processes.hpp).
  const auto processes = recycle::executor::mpi::Processes::start(&argc, &argv);
  if (processes != nullptr && processes->rank() > 0)
    return processes->serve(recycle::tools::run_with_peers);
  recycle::executor::mpi::set_current(processes.get());
#endif
  CLI::App app{
      "recycle: pipeline schedules, failure traces and throughput under failures "
      "(ReCycle, SOSP '24)"};
  app.require_subcommand(1);
  bool verbose = false;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbose, "Log debug messages to stderr");
  app.add_flag("-q,--quiet", quiet, "Log only errors");
  app.footer(examples({"recycle plan --schedule 1f1b --pp 4 --microbatches 8",
                       "recycle plan --check schedule.json",
                       "recycle simulate --schedule zb-h1 --pp 4 --microbatches 8 --costs 1,1,1",
                       "recycle simulate --job job.json --json",
                       "recycle trace gen --preset cloud-bad --seed 1 -o cloud-bad.csv"}));

  std::vector<Command> commands;
  commands.push_back(add_plan_command(app));
  commands.push_back(add_plan_table_command(app));
  commands.push_back(add_degradation_command(app));
  commands.push_back(add_simulate_command(app));
  commands.push_back(add_trace_command(app));
  commands.push_back(add_profile_command(app));
  commands.push_back(add_replay_command(app));
  commands.push_back(add_study_command(app));
  commands.push_back(add_configure_command(app));
  commands.push_back(add_validate_command(app));
  apply_common_rules(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return print_error(e.what());
  }
  recycle::setup_logging(quiet     ? recycle::Verbosity::kQuiet
                         : verbose ? recycle::Verbosity::kVerbose
                                   : recycle::Verbosity::kNormal);
  const Command* running = nullptr;
  try {
    for (const Command& command : commands) {
      if (!command.app->parsed()) continue;
      running = &command;
      // Outputs go in place only when the command ends without an error (exit 0 or 1).
      recycle::OutputTransaction outputs(recycle::OutputTransaction::Stdout::kHold);
      check_outputs();
      const int status = command.run();
      outputs.commit();
      return status;
    }
  } catch (const recycle::InputError& e) {
    return print_error(running != nullptr
                           ? from_costs(*running->app, from_job(*running->app, e)).what()
                           : e.what());
  } catch (const std::bad_alloc&) {
    return print_error("out of memory (the configuration is too large for this machine)");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n", recycle::one_line(e.what()).c_str());
    return 3;
  }
  return kExitBadInput;
}
