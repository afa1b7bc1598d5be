#pragma once
// The REPL's commands: parsing, help, completion candidates, and carrying
// each out through a cerebro::Client. The session (tools/commands/repl.cpp) reads the
// lines and handles a lost coordinator.

#include <optional>
#include <string>
#include <vector>

#include "actors/client.hpp"
#include "runtime/base/log_lines.hpp"
#include "runtime/spec/steering_command.hpp"

namespace cerebro::cli {

struct CommandInfo {
  std::string name;
  std::string usage;    // "show CONFIG"
  std::string summary;  // one line
  std::string details;  // help CMD
  bool read_only;       // safe to run again after a reconnect
};

// The REPL's own commands, beside the steering commands (SteeringCommand).
enum class SessionCommand { status, submit, wait, predict, log, help, quit };
// "status", "submit", "wait", "predict", "log", "help", "quit"
std::string to_string(SessionCommand command);
// The words above, and "exit" for quit; nullopt for any other word.
std::optional<SessionCommand> parse_session_command(const std::string& word);

const std::vector<CommandInfo>& repl_commands();
const CommandInfo* find_command(const std::string& name);

// The words of a command line (split on blanks; no quoting).
std::vector<std::string> split_words(const std::string& line);

class ReplCommands {
 public:
  // `live`: stdin is a terminal, so top refreshes and wait draws progress.
  ReplCommands(Client& client, bool live) : client_(client), live_(live) {}

  // Carries out one line; prints its output on stdout and an error on stderr
  // ("error: ..."). Returns false if the command failed.
  bool execute(const std::vector<std::string>& words);

  // Tab completion: commands, then experiment ids or config ids (of the
  // current experiment, or EXPERIMENT/ID) as the command takes them.
  std::vector<std::string> complete(const std::vector<std::string>& words, const std::string& prefix);

  // The book `log` shows (the embedded cluster's lines); nullptr: the
  // coordinator runs elsewhere and its lines are in its own output. Not owned.
  void set_log_book(const LogBook* book) { log_ = book; }

  // The experiment commands apply to when none is named: the last one
  // submitted or named in this session ("" : the coordinator's latest).
  const std::string& current_experiment() const { return current_; }

 private:
  struct ConfigRef {
    std::string experiment;
    ConfigId id = -1;
  };
  bool run(const std::vector<std::string>& words);
  Result<ConfigRef> config_ref(const std::string& text);
  std::string experiment_arg(const std::string& text);

  bool status();
  bool submit(const std::vector<std::string>& args);
  bool wait(const std::vector<std::string>& args);
  bool top(const std::vector<std::string>& args);
  bool show(const std::vector<std::string>& args);
  bool pause_resume(SteeringCommand command, const std::vector<std::string>& args);
  bool stop(const std::vector<std::string>& args);
  bool add(const std::vector<std::string>& args);
  bool clone(const std::vector<std::string>& args);
  bool export_config(const std::vector<std::string>& args);
  bool predict(const std::vector<std::string>& args);
  bool help(const std::vector<std::string>& args);
  bool log(const std::vector<std::string>& args);

  Client& client_;
  bool live_;
  const LogBook* log_ = nullptr;
  std::string current_;
  std::string named_;  // the experiment the running command named, if any
};

}  // namespace cerebro::cli
