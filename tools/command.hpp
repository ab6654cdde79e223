// How the `recycle` program is put together: one file per subcommand, each adding itself to the
// CLI11 app and returning the function that runs it once the command line has been parsed.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace recycle::tools {

/// Exit codes of every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed =
    1;  ///< ran, and the answer is "no" (invalid schedule, infeasible plan)
inline constexpr int kExitBadInput = 2;  ///< bad flag or file; one `error:` line was printed

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_plan_command(CLI::App& app);
Command add_configure_command(CLI::App& app);
Command add_degradation_command(CLI::App& app);
Command add_plan_table_command(CLI::App& app);
Command add_simulate_command(CLI::App& app);
Command add_trace_command(CLI::App& app);
Command add_profile_command(CLI::App& app);
Command add_replay_command(CLI::App& app);
Command add_study_command(CLI::App& app);
Command add_validate_command(CLI::App& app);

/// Adds an output flag of `app`: a FILE the command writes ("-": stdout). Every output flag given
/// is checked by check_outputs before the command runs, so no command can forget to, and none
/// computes for nothing.
CLI::Option* add_output(CLI::App& app, const std::string& name, std::string& path,
                        const std::string& description);
/// check_writable (core/file_io.hpp) on each output flag given on the command line, in the order
/// they were added: its directory exists, it is no directory, no two name one file. Inside the
/// command's OutputTransaction, before the command reads anything, so an output that names an
/// input is refused when the input is read.
void check_outputs();

/// Formats help text footers the same way in every subcommand.
[[nodiscard]] std::string examples(std::initializer_list<std::string> lines);

}  // namespace recycle::tools
