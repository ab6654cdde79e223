// recycle plan: write a pipeline schedule, or check one.
#include "tools/command.hpp"

namespace recycle::tools {

Command add_plan_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("plan", "Write a pipeline schedule, or check a schedule file");
  return {sub, [] { return kExitOk; }};
}

}  // namespace recycle::tools
