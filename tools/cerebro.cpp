// cerebro: the command line. Each subcommand (run, prepare, show, bench,
// coordinator, agent, status, attach, simulate, repl) is a file in
// tools/commands/ that registers itself (tools/command_registry.hpp); main
// builds the app from the registry, parses, and runs the chosen one.
#include <exception>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "models/unit_trainer.hpp"
#include "runtime/base/version.hpp"
#include "tools/command_registry.hpp"
#include "tools/command_support.hpp"
#include "tools/crash_handler.hpp"

using namespace cerebro;

int main(int argc, char** argv) {
  cli::install_crash_handler();
  // Process-wide, before any command trains: every command's training (runs,
  // agents, and the bench's and allreduce probe's plain-LibTorch reference
  // loops) must use the same allocator settings, or references are unfair
  // (measured: the probe's batch-64 loop 7.31 s without, 1.64 s with).
  models::configure_allocator();
  CLI::App app{"cerebro: deep-learning model selection with Model Hopper Parallelism"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "cerebro " + cerebro_version(), "Print the version and exit");
  std::vector<std::pair<CLI::App*, cli::CommandAction>> commands;
  for (const auto& command : cli::registered_commands()) {
    auto* subcommand = app.add_subcommand(command.name, command.description);
    commands.emplace_back(subcommand, command.setup(*subcommand));
  }

  CLI11_PARSE(app, argc, argv);

  try {
    for (auto& [subcommand, action] : commands)
      if (subcommand->parsed()) return action();
  } catch (const std::exception& e) {
    return cli::fail(e.what());
  }
  return 0;
}
