#pragma once
// `cerebro simulate`: runs the scheduler simulator (runtime/simulator.hpp) and
// prints makespan, lower bound, their ratio, utilization and the policy's
// decision latency, as text or (--json) as JSON. `--policy all` runs every
// policy make_policy knows on the same workload. `--from-run RUN_DIR` simulates
// a real run's workload instead (runtime/sim/from_run.hpp) and prints the
// simulated against the real makespan.

#include <iostream>
#include <memory>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "runtime/sim/simulator.hpp"

namespace cerebro {

struct SimulateCommand {
  CLI::App* command = nullptr;
  SimulationOptions options;
  std::string policy = "critical_path";
  std::string heterogeneity = "paper";
  std::string search = "fixed";
  // mop | auto | data, or compare (mop and auto on the same workload).
  std::string parallelism = "mop";
  bool json = false;
  // --from-run: simulate a real run's workload and compare makespans.
  std::string from_run;

  bool parsed() const { return command && command->parsed(); }
};

// Declares the subcommand's flags on `simulate` (it registers itself with
// tools/command_registry.hpp). The object holds the parsed values, so it must
// outlive the parsing.
std::unique_ptr<SimulateCommand> add_simulate_options(CLI::App& simulate);
// Runs it, printing the report(s) to out; returns the exit code (1 with
// "error: ..." on err on bad input).
int run_simulate_command(const SimulateCommand& command, std::ostream& out = std::cout, std::ostream& err = std::cerr);

}  // namespace cerebro
