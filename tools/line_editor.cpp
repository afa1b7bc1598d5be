#include "tools/line_editor.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

// libedit's readline interface (stdio.h first: it uses FILE).
#include <cstdio>
#include <editline/readline.h>

namespace fs = std::filesystem;

namespace cerebro::cli {

namespace {

constexpr int kHistoryLines = 1000;

// libedit calls plain functions: the active editor's completer and the
// candidates of the word being completed live here.
LineEditor::Completer* active_completer = nullptr;
std::vector<std::string> candidates;

std::vector<std::string> words_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

char* next_candidate(const char* text, int state) {
  static size_t index = 0;
  if (state == 0) index = 0;
  while (index < candidates.size()) {
    const auto& c = candidates[index++];
    if (c.compare(0, std::strlen(text), text) == 0) return strdup(c.c_str());
  }
  return nullptr;
}

char** complete(const char* text, int start, int) {
  rl_attempted_completion_over = 1;  // no file names unless the completer gives them
  if (!active_completer) return nullptr;
  auto words = words_of(std::string(rl_line_buffer, static_cast<size_t>(start)));
  candidates = (*active_completer)(words, text);
  // "EXPERIMENT/" goes on with a config id: no space after it.
  bool all_prefixes = !candidates.empty() && std::all_of(candidates.begin(), candidates.end(), [](const std::string& c) {
    return !c.empty() && c.back() == '/';
  });
  rl_completion_append_character = all_prefixes ? '\0' : ' ';
  return rl_completion_matches(text, next_candidate);
}

}  // namespace

std::string default_history_file() {
  if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state)
    return (fs::path(state) / "cerebro" / "history").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : ".") / ".cerebro_history").string();
}

LineEditor::LineEditor(std::string history_file, Completer completer) : history_file_(std::move(history_file)) {
  active_completer = new Completer(std::move(completer));
  rl_readline_name = "cerebro";
  rl_attempted_completion_function = complete;
  using_history();
  stifle_history(kHistoryLines);
  std::error_code ec;
  fs::create_directories(fs::path(history_file_).parent_path(), ec);
  read_history(history_file_.c_str());
}

LineEditor::~LineEditor() {
  write_history(history_file_.c_str());
  delete active_completer;
  active_completer = nullptr;
}

std::optional<std::string> LineEditor::read(const std::string& prompt) {
  char* raw = readline(prompt.c_str());
  if (!raw) return std::nullopt;
  std::string line(raw);
  std::free(raw);
  if (line.find_first_not_of(" \t") != std::string::npos) {
    add_history(line.c_str());
    write_history(history_file_.c_str());
  }
  return line;
}

}  // namespace cerebro::cli
