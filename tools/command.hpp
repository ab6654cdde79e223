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
Command add_degradation_command(CLI::App& app);
Command add_plan_table_command(CLI::App& app);
Command add_simulate_command(CLI::App& app);
Command add_trace_command(CLI::App& app);
Command add_profile_command(CLI::App& app);
Command add_replay_command(CLI::App& app);
Command add_study_command(CLI::App& app);
Command add_validate_command(CLI::App& app);

/// Formats help text footers the same way in every subcommand.
[[nodiscard]] std::string examples(std::initializer_list<std::string> lines);

}  // namespace recycle::tools
