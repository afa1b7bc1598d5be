#pragma once
// Line editing on a terminal through libedit (Debian's libedit-dev, its
// readline interface): prompt, editing keys, history kept in a file across
// sessions, and tab completion from a provider. One LineEditor per process
// (libedit's readline interface is global state).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/base/log_lines.hpp"

namespace cerebro::cli {

class LineEditor {
 public:
  // The candidates for the word being completed: `words` are the words before
  // it on the line, `prefix` what is typed of it so far. Candidates that do
  // not start with `prefix` are dropped.
  using Completer =
      std::function<std::vector<std::string>(const std::vector<std::string>& words, const std::string& prefix)>;

  // Loads the history from `history_file` (missing: starts empty).
  LineEditor(std::string history_file, Completer completer);
  // Saves the history.
  ~LineEditor();
  LineEditor(const LineEditor&) = delete;
  LineEditor& operator=(const LineEditor&) = delete;

  // A line typed at `prompt`; nullopt at end of input (Ctrl-D). Non-blank
  // lines enter the history (and the file, at once: a crash keeps them).
  // With a log book, its new lines are printed above the prompt: those
  // that came while no prompt was up first, then each as it arrives, the
  // prompt and what is typed so far redrawn below it.
  std::optional<std::string> read(const std::string& prompt);

  // The book whose lines read() shows (nullptr: none). Not owned.
  void show_log(LogBook* book) { log_ = book; }

 private:
  std::optional<std::string> read_showing_log(const std::string& prompt);
  void print_new_log_lines();
  std::string history_file_;
  LogBook* log_ = nullptr;
};

// Where the history lives: $XDG_STATE_HOME/cerebro/history when
// XDG_STATE_HOME is set, else ~/.cerebro_history.
std::string default_history_file();

}  // namespace cerebro::cli
