#include "runtime/base/log_lines.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace cerebro {

namespace {

std::mutex sink_mutex;
LogSink& sink() {
  static LogSink installed;
  return installed;
}

std::string stamp_now() {
  std::time_t t = std::time(nullptr);
  std::tm local{};
  localtime_r(&t, &local);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S ", &local);
  return buf;
}

}  // namespace

void set_log_sink(LogSink new_sink) {
  std::lock_guard<std::mutex> lock(sink_mutex);
  sink() = std::move(new_sink);
}

void emit_log_line(const std::string& line) {
  std::lock_guard<std::mutex> lock(sink_mutex);
  if (sink()) {
    sink()(line);
    return;
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "localhost";
  return buf;
}

LogBook::LogBook(size_t keep) : keep_(keep) {
  if (pipe(pipe_) != 0) {
    pipe_[0] = pipe_[1] = -1;
    return;
  }
  // A writer never blocks on a full pipe (one byte per line is only a wake-up), a reader never waits.
  for (int fd : pipe_) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

LogBook::~LogBook() {
  for (int fd : pipe_)
    if (fd >= 0) close(fd);
}

void LogBook::add(const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  lines_.push_back(stamp_now() + line);
  if (lines_.size() > keep_) lines_.pop_front();
  untaken_ = std::min(untaken_ + 1, lines_.size());
  if (pipe_[1] >= 0) (void)!write(pipe_[1], "x", 1);
}

std::vector<std::string> LogBook::take_new() {
  std::lock_guard<std::mutex> lock(mutex_);
  char drain[256];
  if (pipe_[0] >= 0)
    while (read(pipe_[0], drain, sizeof drain) > 0) {
    }
  std::vector<std::string> out(lines_.end() - static_cast<std::ptrdiff_t>(untaken_), lines_.end());
  untaken_ = 0;
  return out;
}

std::vector<std::string> LogBook::last(size_t n) const {
  std::lock_guard<std::mutex> lock(mutex_);
  n = std::min(n, lines_.size());
  return {lines_.end() - static_cast<std::ptrdiff_t>(n), lines_.end()};
}

}  // namespace cerebro
