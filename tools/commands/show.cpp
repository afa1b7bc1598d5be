// `cerebro show`: a run's leaderboard, or with --units its unit log, from its
// state store.
#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/store/run_summary.hpp"
#include "runtime/store/state_store.hpp"
#include "tools/command_registry.hpp"
#include "tools/command_support.hpp"

namespace fs = std::filesystem;

namespace cerebro::cli {

namespace {

struct ShowOptions {
  std::string run_dir;
  size_t top = 20;
  bool units = false;
};

void print_units(const std::vector<UnitLogEntry>& log) {
  fmt::print("{:>5} {:>6} {:>4} {:>5} {:>6} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8}  {}\n", "seq", "config", "part",
             "epoch", "worker", "start_s", "end_s", "train_s", "valid_s", "restore", "save", "status");
  // A pipeline unit says so after its status, with its crew.
  for (const auto& e : log)
    fmt::print("{:>5} {:>6} {:>4} {:>5} {:>6} {:>9.3f} {:>9.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f}  {}{}\n", e.seq,
               e.config, e.partition, e.epoch, e.worker, e.start_s, e.end_s, e.train_s, e.validate_s, e.restore_s,
               e.save_s, to_string(e.status), e.pipeline_workers.empty() ? "" : "  " + trained_as(e));
}

// One character per config on the lanes: its id's last base-36 digit.
char config_mark(ConfigId c) {
  const char* digits = "0123456789abcdefghijklmnopqrstuvwxyz";
  return digits[(c % 36 + 36) % 36];
}

// Where the workers were busy and idle: one lane per worker over the run
// (each column shows the config running at its middle, '.' for idle), and
// the idle tail (runtime/store/run_summary.hpp ScheduleTail).
void print_schedule(const std::vector<UnitLogEntry>& log, int workers, double wall_s) {
  if (log.empty()) return;
  const ScheduleTail tail = schedule_tail(log, workers);
  if (workers <= 0) workers = static_cast<int>(tail.idle_at_end_s.size());
  double compute = unit_times(log, 0).unit_compute_s;
  double span = tail.last_end_s - tail.first_start_s;
  fmt::print("\nschedule: {} workers, units from {:.1f} s to {:.1f} s, unit compute {:.1f} s", workers,
             tail.first_start_s, tail.last_end_s, compute);
  if (wall_s > 0)
    fmt::print(", wall {:.1f} s, makespan_over_compute {:.3f}", wall_s,
               makespan_over_compute(wall_s, compute, workers));
  fmt::print(
      "\ntail: every worker last busy at {:.1f} s; {:.1f} idle worker-seconds until the last commit at {:.1f} s\n",
      tail.tail_start_s, tail.tail_idle_worker_s, tail.last_end_s);
  constexpr int kColumns = 72;
  const double column = span > 0 ? span / kColumns : 1;
  fmt::print(
      "lanes: one column = {:.2f} s, a character = the config running (its id's last base-36 digit), "
      "'.' = idle, '|' = the tail's start\n",
      column);
  int tail_column = span > 0 ? static_cast<int>((tail.tail_start_s - tail.first_start_s) / column) : 0;
  for (const auto& [w, idle] : tail.idle_at_end_s) {
    std::string lane(kColumns, '.');
    for (const auto& e : log) {
      if (e.worker != w) continue;
      for (int i = 0; i < kColumns; ++i) {
        double middle = tail.first_start_s + (i + 0.5) * column;
        if (middle >= e.start_s && middle < e.worker_end_s()) lane[static_cast<size_t>(i)] = config_mark(e.config);
      }
    }
    if (tail_column > 0 && tail_column < kColumns) lane.insert(static_cast<size_t>(tail_column), 1, '|');
    fmt::print("  worker {:>3} {}  idle at the end {:.1f} s\n", w, lane, idle);
  }
}

int show(const std::string& named, size_t top, bool units) {
  auto resolved = resolve_run_dir(named);
  if (!resolved.ok()) return fail(resolved.error());
  const std::string& dir = *resolved;
  auto store = StateStore::open((fs::path(dir) / "state").string(), false);
  if (!store.ok()) return fail(store.error() + " (is this a run directory?)");
  if (units) {
    auto log = (*store)->unit_log();
    print_units(log);
    int workers = 0;
    double wall_s = 0;
    std::ifstream in(fs::path(dir) / "summary.json");
    if (in) {
      auto summary = nlohmann::json::parse(in, nullptr, false);
      if (!summary.is_discarded() && summary.value("workers", nlohmann::json()).is_number_integer())
        workers = summary["workers"].get<int>();
      if (!summary.is_discarded() && summary.value("wall_s", nlohmann::json()).is_number())
        wall_s = summary["wall_s"].get<double>();
    }
    print_schedule(log, workers, wall_s);
    return 0;
  }
  const Metric metric = stored_metric(**store);
  auto ranked = rank_configs((*store)->configs(), (*store)->unit_log(), metric);
  fmt::print("{}", format_leaderboard(ranked, to_string(metric), top));
  std::ifstream in(fs::path(dir) / "summary.json");
  if (in) {
    auto summary = nlohmann::json::parse(in, nullptr, false);
    if (!summary.is_discarded() && summary["best"].is_object())
      fmt::print("best: config {} test_accuracy {:.4f}\n", summary["best"]["id"].get<int>(),
                 summary["best"]["test_accuracy"].get<double>());
  } else {
    fmt::print("(no summary.json: the run has not finished)\n");
  }
  return 0;
}

CommandAction setup(CLI::App& show_command) {
  auto o = std::make_shared<ShowOptions>();
  show_command.add_option("run_dir", o->run_dir, "Run directory")->required();
  show_command.add_option("--top", o->top, "Rows to show");
  show_command.add_flag("--units", o->units,
                        "Print the unit log instead: which config trained on which partition, "
                        "where, when, and the time it spent on each step; then the workers' lanes and the idle "
                        "tail at the end");
  return [o] { return show(o->run_dir, o->top, o->units); };
}

const CommandRegistrar registrar{{"show", "Print a run's leaderboard from its state store", 70, setup}};

}  // namespace

}  // namespace cerebro::cli
