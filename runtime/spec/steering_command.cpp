#include "runtime/spec/steering_command.hpp"

#include <ostream>

#include "runtime/base/enum_names.hpp"

namespace cerebro {

const std::vector<SteeringCommandInfo>& steering_commands() {
  static const std::vector<SteeringCommandInfo> table = {
      {SteeringCommand::top, "top", "top [EXPERIMENT] [N]",
       "leaderboard by the experiment's metric (live on a terminal)",
       "Ranks the configs by the metric after their last validated epoch, best first (N rows, default 10). On\n"
       "a terminal it refreshes every 2 s while the experiment runs; press Enter to return.",
       SteeringTarget::experiment, true, true},
      {SteeringCommand::show, "show", "show CONFIG",
       "a config's parameters, status, per-epoch metrics and learning curve",
       "CONFIG is a config id of the current experiment (e.g. 3) or EXPERIMENT/ID. Prints its parameters,\n"
       "status, what was done to it by hand, its metrics after each epoch and sparklines of its curves.",
       SteeringTarget::config, true, true},
      {SteeringCommand::pause, "pause", "pause [EXPERIMENT]",
       "dispatch no new units (running units finish, nothing is lost)",
       "Pauses the experiment at unit boundaries: units already running finish and are committed; no new\n"
       "unit starts until resume.",
       SteeringTarget::experiment, false, false},
      {SteeringCommand::resume, "resume", "resume [EXPERIMENT]", "continue a paused experiment",
       "Dispatches units again after pause.", SteeringTarget::experiment, false, false},
      {SteeringCommand::stop, "stop", "stop CONFIG", "end a config now, keeping its last checkpoint",
       "Ends the config at once: it gets no more units (a unit of it still running is discarded) and its last\n"
       "committed state stays its checkpoint (show and export still work).",
       SteeringTarget::config, false, false},
      {SteeringCommand::add, "add", "add [EXPERIMENT] key=value ...", "add a config that starts at its first epoch",
       "Adds a config to a running grid or random search: the experiment's first config's parameters with\n"
       "the given ones changed (e.g. add lr=0.003 hidden=[128]). It trains all the experiment's epochs.",
       SteeringTarget::experiment, false, false},
      {SteeringCommand::clone, "clone", "clone CONFIG key=value ...",
       "a new config from CONFIG's latest weights and optimizer state",
       "Adds a config that starts from CONFIG's latest state (weights and optimizer state) with the given\n"
       "training hyper-parameters changed (e.g. clone 2 lr=0.0005), then trains the experiment's epochs.\n"
       "Parameters that change the model (its layers) cannot be changed by a clone.",
       SteeringTarget::config, false, false},
      {SteeringCommand::export_model, "export", "export CONFIG PATH", "write the config's model as a TorchScript file",
       "Writes CONFIG's latest model to PATH (on this machine) as TorchScript: torch::jit::load(PATH) in plain\n"
       "LibTorch (or torch.jit.load in Python) loads it.",
       SteeringTarget::config, true, false},
      {SteeringCommand::configs, "configs", "", "the ids of the experiment's configs", "", SteeringTarget::none, true,
       true},
      // The HTTP API's views: the whole experiment, and its unit log.
      {SteeringCommand::detail, "detail", "", "the experiment's configs, metrics, best and spec (JSON)", "",
       SteeringTarget::none, true, true},
      {SteeringCommand::units, "units", "", "the experiment's unit log (JSON)", "", SteeringTarget::none, true, true},
      // The HTTP API's downloads: one of the run's files, by name (the request's first setting).
      {SteeringCommand::run_file, "file", "", "one of the run's files (summary.json, metrics.csv, report.html ...)", "",
       SteeringTarget::none, true, true},
  };
  return table;
}

const SteeringCommandInfo* find_steering_command(SteeringCommand command) {
  for (const auto& info : steering_commands()) {
    if (info.command == command) return &info;
  }
  return nullptr;
}

std::string to_string(SteeringCommand command) {
  const SteeringCommandInfo* info = find_steering_command(command);
  return info ? info->name : "command " + std::to_string(static_cast<int>(command));
}

std::optional<SteeringCommand> parse_steering_command(const std::string& name) {
  return enum_named<SteeringCommand>(steering_commands(), name);
}

std::ostream& operator<<(std::ostream& os, SteeringCommand command) { return os << to_string(command); }

}  // namespace cerebro
