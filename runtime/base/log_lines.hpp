#pragma once
// Log lines of the long-running parts of a process (the coordinator, an
// agent) go through one process-wide sink: standard error, unless a program
// with its own display installs another. The REPL does: a line printed from
// another thread would land on its prompt line, so it keeps the lines in a
// LogBook and prints them above the prompt when it can (and `log` shows them).

#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace cerebro {

using LogSink = std::function<void(const std::string& line)>;

// Installs `sink` for every later line; an empty sink restores standard error. Thread-safe.
void set_log_sink(LogSink sink);
// Hands `line` (without its newline) to the sink. Thread-safe; the sink is called under a lock, one line at a time.
void emit_log_line(const std::string& line);

// This machine's host name ("localhost" when it has none).
std::string host_name();

// A thread-safe record of log lines for a display that shows them when it can.
// Lines arrive from any thread; the display takes the new ones and waits on
// wake_fd() (readable while there are lines not yet taken) beside its input.
class LogBook {
 public:
  explicit LogBook(size_t keep = 1000);
  ~LogBook();
  LogBook(const LogBook&) = delete;
  LogBook& operator=(const LogBook&) = delete;

  // Records the line, stamped with the local time ("12:34:56 "). Any thread.
  void add(const std::string& line);
  // The lines added since the last call (stamped), oldest first; empties the wake pipe.
  std::vector<std::string> take_new();
  // The newest `n` lines kept (stamped), oldest first.
  std::vector<std::string> last(size_t n) const;
  // Readable while lines wait to be taken; -1 if no pipe could be made.
  int wake_fd() const { return pipe_[0]; }

 private:
  size_t keep_;
  mutable std::mutex mutex_;
  std::deque<std::string> lines_;
  size_t untaken_ = 0;
  int pipe_[2] = {-1, -1};
};

}  // namespace cerebro
