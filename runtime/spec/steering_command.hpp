#pragma once
// The commands a person sends a running (or finished) experiment: one table
// read by the REPL (its words, help and completion, tools/repl_commands.cpp),
// the client and gateway (control_request carries the enum,
// actors/coordinator_control.cpp and actors/experiment_steering.cpp) and the
// scheduler (actors/scheduler.cpp applies the ones that change the schedule).
// The name is the only text, used where a person types or reads a command.

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace cerebro {

// detail and units serve the HTTP API (runtime/api/experiment_view.hpp): not REPL words.
enum class SteeringCommand {
  pause,
  resume,
  stop,
  add,
  clone,
  show,
  top,
  export_model,
  configs,
  detail,
  units,
  run_file
};

// What the command's first argument names in the REPL (for completion).
enum class SteeringTarget {
  experiment,  // [EXPERIMENT], the current one by default
  config,      // CONFIG: an id of the current experiment or EXPERIMENT/ID
  none,        // not typed in the REPL
};

struct SteeringCommandInfo {
  SteeringCommand command;
  std::string name;     // "pause": the REPL's word and the text in messages
  std::string usage;    // "pause [EXPERIMENT]"; empty: not a REPL command (configs serves completion)
  std::string summary;  // one line, for help
  std::string details;  // help CMD
  SteeringTarget target;
  // Answered from the experiment's store without changing it, so also after
  // the experiment ended (show, top, export, configs).
  bool reads_store;
  // Safe to run again after the REPL reconnects (no side effect at all).
  bool repeatable;
};

// Every command, in the REPL's help order.
const std::vector<SteeringCommandInfo>& steering_commands();
// The entry of a command; nullptr for a value outside the enum (a malformed
// request from a peer).
const SteeringCommandInfo* find_steering_command(SteeringCommand command);

std::string to_string(SteeringCommand command);
std::optional<SteeringCommand> parse_steering_command(const std::string& name);
std::ostream& operator<<(std::ostream& os, SteeringCommand command);

}  // namespace cerebro
