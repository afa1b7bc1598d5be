#include "runtime/viz/run_view.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "runtime/base/file_io.hpp"

namespace fs = std::filesystem;

namespace cerebro {

RunView run_view_of(const StateStore& store, const std::string& experiment) {
  RunView view;
  view.experiment = store.get_meta("experiment_id").value_or(experiment);
  view.metric = store.get_meta("metric").value_or("val_accuracy");
  view.log = store.unit_log();
  const Metric metric = stored_metric(store);  // a template metric keeps its goal
  view.metric_higher_is_better = metric.higher_is_better();
  view.ranked = rank_configs(store.configs(), view.log, metric);
  return view;
}

Result<RunView> load_run_view(const std::string& run_dir) {
  fs::path dir = run_dir;
  if (!fs::is_directory(dir)) return Status::not_found(run_dir + ": no such run directory");
  if (!fs::is_directory(dir / "state"))
    return Status::not_found(fmt::format("{}: not a run directory (it has no state/ store)", run_dir));
  auto store = StateStore::open((dir / "state").string(), false);
  // RocksDB locks a store while a process has it open: a run still going cannot be read.
  if (!store.ok())
    return Status::of(store.code(), store.error() +
                                        " (a run still going holds its store: read it once it has "
                                        "finished or stopped)");
  return run_view_in(**store, run_dir);
}

Result<RunView> run_view_in(const StateStore& store, const std::string& run_dir) {
  fs::path dir = run_dir;
  auto view = run_view_of(store, dir.filename().string());
  view.place = run_dir;
  if (fs::exists(dir / "summary.json")) {
    auto text = read_whole_file((dir / "summary.json").string());
    if (!text.ok()) return text.status();
    view.summary = nlohmann::json::parse(*text, nullptr, false);
    if (view.summary.is_discarded()) return Status::corruption((dir / "summary.json").string() + ": not valid JSON");
    if (view.summary.contains("experiment") && view.summary["experiment"].is_string())
      view.experiment = view.summary["experiment"].get<std::string>();
  }
  return view;
}

std::pair<double, double> log_span(const std::vector<UnitLogEntry>& log) {
  if (log.empty()) return {0, 0};
  double start = log.front().start_s, end = log.front().end_s;
  for (const auto& e : log) {
    start = std::min(start, e.start_s);
    end = std::max(end, e.end_s);
  }
  return {start, end};
}

std::vector<WorkerId> log_workers(const std::vector<UnitLogEntry>& log) {
  std::set<WorkerId> workers;
  for (const auto& e : log) workers.insert(e.worker);
  return {workers.begin(), workers.end()};
}

}  // namespace cerebro
