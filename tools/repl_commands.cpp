#include "tools/repl_commands.hpp"

#include <sys/select.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "models/predict.hpp"
#include "runtime/spec/spec.hpp"
#include "runtime/spec/steering_command.hpp"
#include "tools/status_format.hpp"

namespace cerebro::cli {

namespace {

bool error(const std::string& message) {
  fmt::print(stderr, "error: {}\n", message);
  std::fflush(stderr);
  return false;
}

bool usage_error(const std::string& command, const std::string& problem) {
  return error(fmt::format("{}: {} (usage: {}; see help {})", command, problem, find_command(command)->usage, command));
}

bool is_number(const std::string& s) {
  return !s.empty() && s.size() < 10 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_setting(const std::string& s) { return s.find('=') != std::string::npos; }

// Waits up to `seconds` for a line on stdin (the user pressed Enter); reads it.
bool enter_pressed(double seconds) {
  fd_set fds;
  FD_ZERO(&fds);
  FD_SET(STDIN_FILENO, &fds);
  timeval tv{static_cast<long>(seconds), static_cast<long>((seconds - static_cast<long>(seconds)) * 1e6)};
  if (select(STDIN_FILENO + 1, &fds, nullptr, nullptr, &tv) <= 0) return false;
  char buf[256];
  (void)!read(STDIN_FILENO, buf, sizeof buf);
  return true;
}

}  // namespace

namespace {
// The first name of a command is the one to_string gives.
const std::pair<SessionCommand, const char*> session_command_names[] = {
    {SessionCommand::status, "status"},   {SessionCommand::submit, "submit"}, {SessionCommand::wait, "wait"},
    {SessionCommand::predict, "predict"}, {SessionCommand::log, "log"},       {SessionCommand::help, "help"},
    {SessionCommand::quit, "quit"},       {SessionCommand::quit, "exit"}};
}  // namespace

std::string to_string(SessionCommand command) {
  for (const auto& [c, name] : session_command_names)
    if (c == command) return name;
  return "quit";
}

std::optional<SessionCommand> parse_session_command(const std::string& word) {
  for (const auto& [command, name] : session_command_names)
    if (word == name) return command;
  return std::nullopt;
}

const std::vector<CommandInfo>& repl_commands() {
  static const std::vector<CommandInfo> commands = {
      {"status", "status", "the cluster's agents and every experiment (units done, ETA)",
       "Lists the agents (workers, cores, speed) and every experiment: its status, units done of total, time\n"
       "elapsed and the estimated time left.",
       true},
      {"submit", "submit SPEC", "start an experiment from a spec file; returns at once",
       "Submits the experiment spec (a TOML file, see docs/SPEC.md) and prints its id. It becomes the current\n"
       "experiment: commands that take an optional EXPERIMENT apply to it.",
       false},
      {"wait", "wait [EXPERIMENT]", "block until the experiment finishes",
       "Waits until the experiment (default: the current one) completes or fails, showing its progress on a\n"
       "terminal. Fails if the experiment failed.",
       true},
      {"predict", "predict CONFIG DATA OUT", "run a config's model over a CSV, IDX or image data set; write OUT (CSV)",
       "Exports the config's latest model (as export does) and runs it over DATA: a CSV with the training\n"
       "features' columns, an IDX images file or a directory of IDX files. OUT gets one row per example: the\n"
       "class and its probabilities, the labels, or the regression outputs (see cerebro predict).",
       true},
  };
  static const std::vector<CommandInfo> session = {
      {"log", "log [N]", "the last N (default 20) log lines of the embedded coordinator and agent",
       "Shows this session's log lines (experiments submitted, resumed, completed; agents joining), newest\n"
       "last, with the time each came. On a terminal they are also printed above the prompt as they come.\n"
       "Attached with --cluster, the coordinator's lines are in its own output instead.",
       true},
      {"help", "help [COMMAND]", "list the commands, or explain one", "", true},
      {"quit", "quit", "leave the REPL (experiments on a cluster go on)",
       "Leaves the REPL. With --cluster the experiments go on on the coordinator; an embedded cluster ends\n"
       "with the REPL.",
       true},
  };
  // The cluster's commands, then the steering commands (one table with the
  // gateway's, runtime/spec/steering_command.hpp), then the session's.
  static const std::vector<CommandInfo> all = [] {
    std::vector<CommandInfo> out = commands;
    for (const SteeringCommandInfo& s : steering_commands()) {
      if (!s.usage.empty()) out.push_back({s.name, s.usage, s.summary, s.details, s.repeatable});
    }
    out.insert(out.end(), session.begin(), session.end());
    return out;
  }();
  return all;
}

// What a steering command's first argument names; none for every other word.
static SteeringTarget target_of(const std::string& word) {
  auto command = parse_steering_command(word);
  return command ? find_steering_command(*command)->target : SteeringTarget::none;
}

const CommandInfo* find_command(const std::string& name) {
  for (const auto& c : repl_commands())
    if (c.name == name) return &c;
  return nullptr;
}

std::vector<std::string> split_words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string ReplCommands::experiment_arg(const std::string& text) {
  named_ = text;  // becomes the current experiment if the command succeeds
  return text;
}

Result<ReplCommands::ConfigRef> ReplCommands::config_ref(const std::string& text) {
  ConfigRef ref{current_, -1};
  auto id = text;
  if (auto slash = text.rfind('/'); slash != std::string::npos) {
    ref.experiment = experiment_arg(text.substr(0, slash));
    id = text.substr(slash + 1);
  }
  if (!is_number(id))
    return Status::invalid_argument(fmt::format("\"{}\" is not a config: give its id (3) or EXPERIMENT/ID", text));
  ref.id = std::stoi(id);
  return ref;
}

bool ReplCommands::execute(const std::vector<std::string>& words) {
  if (words.empty()) return true;
  named_.clear();
  bool ok = run(words);
  if (ok && !named_.empty()) current_ = named_;
  return ok;
}

bool ReplCommands::run(const std::vector<std::string>& words) {
  const auto& name = words[0];
  std::vector<std::string> args(words.begin() + 1, words.end());
  const auto* command = find_command(name);
  if (!command) {
    std::vector<std::string> names;
    for (const auto& c : repl_commands()) names.push_back(c.name);
    return error(
        fmt::format("unknown command \"{}\"; commands: {} (help CMD explains one)", name, fmt::join(names, ", ")));
  }
  if (auto steering = parse_steering_command(name)) {
    switch (*steering) {
      case SteeringCommand::top: return top(args);
      case SteeringCommand::show: return show(args);
      case SteeringCommand::pause:
      case SteeringCommand::resume: return pause_resume(*steering, args);
      case SteeringCommand::stop: return stop(args);
      case SteeringCommand::add: return add(args);
      case SteeringCommand::clone: return clone(args);
      case SteeringCommand::export_model: return export_config(args);
      case SteeringCommand::configs:
      case SteeringCommand::detail:
      case SteeringCommand::units:
      case SteeringCommand::run_file: break;  // not REPL commands: find_command has refused them
    }
    return true;
  }
  switch (*parse_session_command(name)) {  // find_command knows only steering and session commands
    case SessionCommand::status: return args.empty() ? status() : usage_error(name, "takes no arguments");
    case SessionCommand::submit: return submit(args);
    case SessionCommand::wait: return wait(args);
    case SessionCommand::predict: return predict(args);
    case SessionCommand::log: return log(args);
    case SessionCommand::help: return help(args);
    case SessionCommand::quit: break;
  }
  return true;  // quit: the session ends the loop
}

bool ReplCommands::status() {
  auto s = client_.status();
  if (!s.ok()) return error(s.error());
  fmt::print("{}", format_cluster_status(*s));
  // Training experiments: paused or not, and the best config so far (the
  // status table has no room for them).
  for (const auto& e : (*s)["experiments"]) {
    if (experiment_status_of(e) != ExperimentStatus::running || e["units_total"].get<int64_t>() == 0) continue;
    auto board = client_.top(e["id"].get<std::string>(), 1);
    if (!board.ok()) continue;  // it finished meanwhile
    const auto& rows = (*board)["rows"];
    auto best = !rows.empty() && !rows[0]["metric"].is_null()
                    ? fmt::format("best config {} {} {:.4f}", rows[0]["config"].get<int>(),
                                  (*board)["metric"].get<std::string>(), rows[0]["metric"].get<double>())
                    : std::string("no config has ended an epoch yet");
    fmt::print("  {}: {}{}\n", e["id"].get<std::string>(), (*board)["paused"].get<bool>() ? "paused, " : "", best);
  }
  return true;
}

bool ReplCommands::submit(const std::vector<std::string>& args) {
  if (args.size() != 1) return usage_error("submit", "give one spec file");
  auto spec = parse_spec_file(args[0]);  // the same errors as `cerebro run`, before any traffic
  if (!spec.ok()) return error(spec.error());
  auto id = client_.submit(spec->source_text, spec->spec_dir, args[0]);
  if (!id.ok()) return error(id.error());
  current_ = *id;
  fmt::print("submitted experiment {}\n", *id);
  return true;
}

bool ReplCommands::wait(const std::vector<std::string>& args) {
  if (args.size() > 1) return usage_error("wait", "give at most one experiment");
  auto experiment = args.empty() ? current_ : experiment_arg(args[0]);
  bool drawn = false;
  std::string front;  // the Pareto front printed last (several objectives)
  auto done = client_.wait(experiment, [&](const nlohmann::json& e) {
    // Several objectives: the front so far, printed (above the progress line) whenever it changes.
    if (auto pareto = e.find("pareto"); pareto != e.end() && pareto->is_object()) {
      if (auto text = format_live_pareto(*pareto); text != front) {
        if (drawn) fmt::print(stderr, "\r\033[K");
        fmt::print("{}", text);
        std::fflush(stdout);
        front = std::move(text);
      }
    }
    if (!live_) return;
    fmt::print(stderr, "\r\033[K{}: {}/{} units, elapsed {}", e["id"].get<std::string>(),
               e["units_done"].get<int64_t>(), e["units_total"].get<int64_t>(),
               clock_text(e["elapsed_s"].get<double>()));
    std::fflush(stderr);
    drawn = true;
  });
  if (drawn) fmt::print(stderr, "\r\033[K");
  if (!done.ok()) return error(done.error());
  const auto& e = *done;
  fmt::print("experiment {} {}: {}/{} units in {}\n", e["id"].get<std::string>(), e["status"].get<std::string>(),
             e["units_done"].get<int64_t>(), e["units_total"].get<int64_t>(), clock_text(e["elapsed_s"].get<double>()));
  // The final front (every objective measured at the end), from the run's store.
  if (!front.empty() || e.contains("pareto")) {
    if (auto board = client_.top(e["id"].get<std::string>(), 1); board.ok() && board->contains("pareto"))
      fmt::print("{}", format_live_pareto((*board)["pareto"]));
  }
  if (experiment_status_of(e) != ExperimentStatus::completed)
    return error(fmt::format("experiment {} {}", e["id"].get<std::string>(), e["status"].get<std::string>()));
  return true;
}

bool ReplCommands::top(const std::vector<std::string>& args) {
  std::string experiment = current_;
  int rows = 10;
  if (args.size() > 2) return usage_error("top", "too many arguments");
  for (size_t i = 0; i < args.size(); ++i) {
    if (is_number(args[i]) && i + 1 == args.size()) {
      rows = std::stoi(args[i]);
      if (rows < 1) return usage_error("top", "N must be at least 1");
    } else if (i == 0) {
      experiment = experiment_arg(args[i]);
    } else {
      return usage_error("top", fmt::format("\"{}\" is not a number of rows", args[i]));
    }
  }
  for (bool first = true;; first = false) {
    auto board = client_.top(experiment, rows);
    if (!board.ok()) return error(board.error());
    if (live_ && !first) fmt::print("\033[H\033[J");  // redraw in place
    fmt::print("{}", format_top(*board));
    if (!live_) return true;
    auto s = client_.status();
    bool running = false;
    if (s.ok())
      for (const auto& e : (*s)["experiments"])
        if (e["id"] == (*board)["experiment"] && experiment_status_of(e) == ExperimentStatus::running) running = true;
    if (!running) return true;
    fmt::print("(live: refreshing every 2 s; press Enter to return)\n");
    std::fflush(stdout);
    if (enter_pressed(2.0)) return true;
  }
}

bool ReplCommands::show(const std::vector<std::string>& args) {
  if (args.size() != 1) return usage_error("show", "give one config");
  auto ref = config_ref(args[0]);
  if (!ref.ok()) return usage_error("show", ref.error());
  auto detail = client_.show(ref->experiment, ref->id);
  if (!detail.ok()) return error(detail.error());
  fmt::print("{}", format_config(*detail));
  return true;
}

bool ReplCommands::pause_resume(SteeringCommand command, const std::vector<std::string>& args) {
  const bool pause = command == SteeringCommand::pause;
  if (args.size() > 1) return usage_error(to_string(command), "give at most one experiment");
  auto experiment = args.empty() ? current_ : experiment_arg(args[0]);
  auto done = pause ? client_.pause(experiment) : client_.resume(experiment);
  if (!done.ok()) return error(done.error());
  fmt::print("experiment {} {}\n", (*done)["experiment"].get<std::string>(),
             pause ? "paused: running units finish, no new unit starts" : "resumed");
  return true;
}

bool ReplCommands::stop(const std::vector<std::string>& args) {
  if (args.size() != 1) return usage_error("stop", "give one config");
  auto ref = config_ref(args[0]);
  if (!ref.ok()) return usage_error("stop", ref.error());
  auto done = client_.stop(ref->experiment, ref->id);
  if (!done.ok()) return error(done.error());
  fmt::print("config {} of experiment {} stopped; its last checkpoint is kept\n", ref->id,
             (*done)["experiment"].get<std::string>());
  return true;
}

bool ReplCommands::add(const std::vector<std::string>& args) {
  std::vector<std::string> settings = args;
  std::string experiment = current_;
  if (settings.size() > 1 && !is_setting(settings[0])) {
    experiment = experiment_arg(settings[0]);
    settings.erase(settings.begin());
  }
  if (settings.empty()) return usage_error("add", "give at least one key=value");
  auto done = client_.add(experiment, settings);
  if (!done.ok()) return error(done.error());
  fmt::print("added config {} to experiment {}: {}\n", (*done)["config"].get<int>(),
             (*done)["experiment"].get<std::string>(), (*done)["params"].dump());
  return true;
}

bool ReplCommands::clone(const std::vector<std::string>& args) {
  if (args.size() < 2) return usage_error("clone", "give a config and at least one key=value");
  auto ref = config_ref(args[0]);
  if (!ref.ok()) return usage_error("clone", ref.error());
  std::vector<std::string> settings(args.begin() + 1, args.end());
  auto done = client_.clone(ref->experiment, ref->id, settings);
  if (!done.ok()) return error(done.error());
  fmt::print("config {} of experiment {} is a clone of config {} (its latest weights and optimizer state): {}\n",
             (*done)["config"].get<int>(), (*done)["experiment"].get<std::string>(), ref->id, (*done)["params"].dump());
  return true;
}

bool ReplCommands::export_config(const std::vector<std::string>& args) {
  if (args.size() != 2) return usage_error("export", "give a config and a path");
  auto ref = config_ref(args[0]);
  if (!ref.ok()) return usage_error("export", ref.error());
  auto done = client_.export_model(ref->experiment, ref->id, args[1]);
  if (!done.ok()) return error(done.error());
  fmt::print("wrote config {}'s model ({} bytes, TorchScript) to {}\n", ref->id, (*done)["bytes"].get<int64_t>(),
             args[1]);
  return true;
}

bool ReplCommands::predict(const std::vector<std::string>& args) {
  if (args.size() != 3) return usage_error("predict", "give a config, the data and the output file");
  auto ref = config_ref(args[0]);
  if (!ref.ok()) return usage_error("predict", ref.error());
  // The model comes over as export's file (with its model info inside), next to OUT, and goes again.
  const std::string model = args[2] + ".model.pt";
  auto exported = client_.export_model(ref->experiment, ref->id, model);
  if (!exported.ok()) return error(exported.error());
  auto rows = models::predict_to_csv(model, args[1], args[2]);
  std::remove(model.c_str());
  if (!rows.ok()) return error(rows.error());
  fmt::print("wrote {} predictions of config {} to {}\n", *rows, ref->id, args[2]);
  return true;
}

bool ReplCommands::log(const std::vector<std::string>& args) {
  if (args.size() > 1 || (args.size() == 1 && !is_number(args[0])))
    return usage_error("log", "give at most one number of lines");
  size_t n = args.empty() ? 20 : static_cast<size_t>(std::stoul(args[0]));
  if (!log_) {
    fmt::print("(attached to a coordinator: its log lines are in its own output)\n");
    return true;
  }
  auto lines = log_->last(n);
  if (lines.empty()) fmt::print("(no log lines yet)\n");
  for (const auto& l : lines) fmt::print("{}\n", l);
  return true;
}

bool ReplCommands::help(const std::vector<std::string>& args) {
  if (args.size() > 1) return usage_error("help", "give at most one command");
  if (args.empty()) {
    fmt::print("commands (help CMD for details; CONFIG is an id of the current experiment or EXPERIMENT/ID):\n");
    for (const auto& c : repl_commands()) fmt::print("  {:<32} {}\n", c.usage, c.summary);
    return true;
  }
  const auto* c = find_command(args[0]);
  if (!c) return error(fmt::format("help: no command \"{}\"", args[0]));
  fmt::print("{}\n  {}\n{}{}", c->usage, c->summary, c->details, c->details.empty() ? "" : "\n");
  return true;
}

std::vector<std::string> ReplCommands::complete(const std::vector<std::string>& words, const std::string& prefix) {
  std::vector<std::string> out;
  if (words.empty()) {
    for (const auto& c : repl_commands()) out.push_back(c.name);
    return out;
  }
  const auto& command = words[0];
  auto experiments = [&] {
    if (auto s = client_.status(); s.ok())
      for (const auto& e : (*s)["experiments"]) out.push_back(e["id"].get<std::string>());
  };
  auto config_ids = [&](const std::string& experiment, const std::string& qualifier) {
    if (auto c = client_.configs(experiment); c.ok())
      for (const auto& id : (*c)["configs"]) out.push_back(qualifier + std::to_string(id.get<int>()));
  };
  const bool first_arg = words.size() == 1;
  const auto session = parse_session_command(command);
  if (session == SessionCommand::help && first_arg) {
    for (const auto& c : repl_commands()) out.push_back(c.name);
  } else if ((session == SessionCommand::wait || target_of(command) == SteeringTarget::experiment) && first_arg) {
    experiments();
  } else if (target_of(command) == SteeringTarget::config && first_arg) {
    if (auto slash = prefix.rfind('/'); slash != std::string::npos) {
      config_ids(prefix.substr(0, slash), prefix.substr(0, slash + 1));
    } else {
      config_ids(current_, "");
      experiments();
      for (auto& e : out)
        if (!is_number(e)) e += "/";
    }
  }
  out.erase(std::remove_if(out.begin(), out.end(), [&](const std::string& c) { return c.rfind(prefix, 0) != 0; }),
            out.end());
  return out;
}

}  // namespace cerebro::cli
