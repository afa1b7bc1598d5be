#pragma once
// The subcommands of the cerebro executable. Each lives in its own file under
// tools/commands/, declares its options and its action there, and registers
// itself with a static CommandRegistrar; main() (tools/cerebro.cpp) adds every
// registered command to the CLI11 app, parses, and runs the chosen one's action.
// Static registration is safe here: the command files are compiled into the
// executable itself, not into a library the linker could leave out.

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace cerebro::cli {

// What a parsed subcommand does; returns the process's exit code.
using CommandAction = std::function<int()>;

struct Command {
  std::string name;
  std::string description;  // its line in `cerebro --help`
  int help_position = 0;    // where that line stands: ascending
  // Declares the subcommand's options on `command`, bound to state that the
  // returned action owns, so they stay valid through parsing.
  std::function<CommandAction(CLI::App& command)> setup;
};

void register_command(Command command);

// Every registered command, in help order.
std::vector<Command> registered_commands();

struct CommandRegistrar {
  explicit CommandRegistrar(Command command) { register_command(std::move(command)); }
};

}  // namespace cerebro::cli
