#include <utility>
#include <vector>

#include "core/file_io.hpp"
#include "tools/command.hpp"

namespace recycle::tools {

namespace {

/// Every output flag of the program, with the string it fills.
std::vector<std::pair<CLI::Option*, const std::string*>>& outputs() {
  static std::vector<std::pair<CLI::Option*, const std::string*>> all;
  return all;
}

}  // namespace

CLI::Option* add_output(CLI::App& app, const std::string& name, std::string& path,
                        const std::string& description) {
  CLI::Option* option = app.add_option(name, path, description);
  outputs().emplace_back(option, &path);
  return option;
}

void check_outputs() {
  for (const auto& [option, path] : outputs()) {
    if (option->count() > 0) check_writable(*path, option->get_name());
  }
}

}  // namespace recycle::tools
