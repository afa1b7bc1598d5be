#pragma once
// Shows a run's progress: one self-rewriting status line on a terminal
// (units done of total, ETA, best so far) plus event lines; plain log lines
// when stderr is not a terminal.

#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <unistd.h>

#include "runtime/net/messages.hpp"

namespace cerebro::cli {

class ProgressPrinter {
 public:
  explicit ProgressPrinter(std::string metric) : metric_(std::move(metric)), terminal_(isatty(fileno(stderr)) != 0) {}

  void line(const std::string& text) {
    clear_status();
    fmt::print(stderr, "{}\n", text);
    redraw();
  }

  void update(const progress_update& p) {
    last_ = p;
    has_last_ = true;
    if (!p.event.empty()) {
      clear_status();
      fmt::print(stderr, "[{:>7.1f}s] {:>4}/{} units  {}\n", p.elapsed_s, p.units_done, p.units_total, p.event);
    }
    redraw();
  }

  void finish() { clear_status(); }

 private:
  static std::string clock(double seconds) {
    auto s = static_cast<long>(seconds + 0.5);
    return fmt::format("{}:{:02d}:{:02d}", s / 3600, (s / 60) % 60, s % 60);
  }
  void clear_status() {
    if (terminal_ && drawn_) fmt::print(stderr, "\r\033[K");
    drawn_ = false;
  }
  void redraw() {
    if (!terminal_ || !has_last_) return;
    const auto& p = last_;
    std::string eta = "--:--";
    if (p.units_done > 0 && p.units_total >= p.units_done)
      eta = clock(p.elapsed_s / static_cast<double>(p.units_done) * static_cast<double>(p.units_total - p.units_done));
    std::string best = p.best_config >= 0
                           ? fmt::format("best config {} {} {:.4f}", p.best_config, metric_, p.best_metric)
                           : std::string("best: none yet");
    fmt::print(stderr, "\r\033[K{} units {}/{}  elapsed {}  ETA {}  {}", bar(p), p.units_done, p.units_total,
               clock(p.elapsed_s), eta, best);
    std::fflush(stderr);
    drawn_ = true;
  }
  static std::string bar(const progress_update& p) {
    const int width = 20;
    int filled = p.units_total > 0 ? static_cast<int>(width * p.units_done / p.units_total) : 0;
    return "[" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
  }

  std::string metric_;
  bool terminal_;
  bool drawn_ = false;
  bool has_last_ = false;
  progress_update last_;
};

}  // namespace cerebro::cli
