#include "tools/command_registry.hpp"

#include <algorithm>

namespace cerebro::cli {

namespace {

// A function-local static: registrars in other files run during static
// initialization, in an order C++ leaves open.
std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}

}  // namespace

void register_command(Command command) { registry().push_back(std::move(command)); }

std::vector<Command> registered_commands() {
  auto commands = registry();
  std::sort(commands.begin(), commands.end(), [](const Command& a, const Command& b) {
    return a.help_position != b.help_position ? a.help_position < b.help_position : a.name < b.name;
  });
  return commands;
}

}  // namespace cerebro::cli
