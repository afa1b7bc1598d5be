#include "tools/line_editor.hpp"

#include <poll.h>
#include <unistd.h>

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
  bool all_prefixes =
      !candidates.empty() && std::all_of(candidates.begin(), candidates.end(),
                                         [](const std::string& c) { return !c.empty() && c.back() == '/'; });
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

namespace {

// libedit's callback interface hands the finished line to a plain function.
bool line_finished = false;
std::optional<std::string> finished_line;

void on_line(char* raw) {
  line_finished = true;
  finished_line = raw ? std::optional<std::string>(raw) : std::nullopt;
  std::free(raw);
  rl_callback_handler_remove();
}

}  // namespace

void LineEditor::print_new_log_lines() {
  auto lines = log_->take_new();
  for (const auto& l : lines) std::fprintf(stdout, "%s\n", l.c_str());
  std::fflush(stdout);
}

std::optional<std::string> LineEditor::read_showing_log(const std::string& prompt) {
  // What came while a command ran goes above this prompt.
  print_new_log_lines();
  line_finished = false;
  finished_line.reset();
  rl_callback_handler_install(prompt.c_str(), on_line);  // draws the prompt
  while (!line_finished) {
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {log_->wake_fd(), POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) continue;  // EINTR: a signal; look again
    if (fds[1].revents & POLLIN) {
      // Erase the prompt line, print the log lines where it was, then draw
      // the prompt and what is typed so far again below them.
      std::fputs("\r\033[K", stdout);
      print_new_log_lines();
      rl_forced_update_display();
    }
    if (fds[0].revents & POLLIN) {
      rl_callback_read_char();
    } else if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
      rl_callback_handler_remove();  // the terminal is gone: end of input
      return std::nullopt;
    }
  }
  return finished_line;
}

std::optional<std::string> LineEditor::read(const std::string& prompt) {
  std::optional<std::string> got;
  if (log_ && log_->wake_fd() >= 0) {
    got = read_showing_log(prompt);
  } else {
    char* raw = readline(prompt.c_str());
    if (raw) got = std::string(raw);
    std::free(raw);
  }
  if (!got) return std::nullopt;
  std::string line = *got;
  if (line.find_first_not_of(" \t") != std::string::npos) {
    add_history(line.c_str());
    write_history(history_file_.c_str());
  }
  return line;
}

}  // namespace cerebro::cli
