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
  for (const auto& e : log)
    fmt::print("{:>5} {:>6} {:>4} {:>5} {:>6} {:>9.3f} {:>9.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f}  {}\n", e.seq,
               e.config, e.partition, e.epoch, e.worker, e.start_s, e.end_s, e.train_s, e.validate_s, e.restore_s,
               e.save_s, to_string(e.status));
}

int show(const std::string& dir, size_t top, bool units) {
  auto store = StateStore::open((fs::path(dir) / "state").string(), false);
  if (!store.ok()) return fail(store.error() + " (is this a run directory?)");
  if (units) {
    print_units((*store)->unit_log());
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
                        "where, when, and the time it spent on each step");
  return [o] { return show(o->run_dir, o->top, o->units); };
}

const CommandRegistrar registrar{{"show", "Print a run's leaderboard from its state store", 70, setup}};

}  // namespace

}  // namespace cerebro::cli
