#pragma once
// What the pictures of a run are drawn from: its configs ranked by the run's
// metric (with their per-epoch metrics) and its unit log, read from the run
// directory's state store, plus summary.json when the run has finished.
// The TensorBoard logs and the HTML report both take a RunView.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/status.hpp"
#include "runtime/store/run_summary.hpp"
#include "runtime/store/state_store.hpp"

namespace cerebro {

struct RunView {
  std::string experiment;  // the spec's name when summary.json has it, else its id
  std::string place;       // where it was read from (the run directory), for titles
  std::string metric = "val_accuracy";
  std::vector<Standing> ranked;         // best first (rank_configs)
  std::vector<UnitLogEntry> log;        // committed units, in commit order
  nlohmann::json summary;               // summary.json; null while the run has not finished
  bool metric_higher_is_better = true;  // the metric's direction (a template's metric: its recorded goal)
};

// The view of a store (summary left null).
RunView run_view_of(const StateStore& store, const std::string& experiment);

// The view of `store`, open already, of the run in `run_dir`, with its summary.json when there is one.
Result<RunView> run_view_in(const StateStore& store, const std::string& run_dir);

// Reads RUN_DIR/state (the state store; it must not be open in another
// process: RocksDB locks it) and RUN_DIR/summary.json when there is one.
// Errors name the directory or the file.
Result<RunView> load_run_view(const std::string& run_dir);

// The time span of the log: the earliest unit start and latest unit end, in
// the log's seconds since the run started (0, 0 for an empty log).
std::pair<double, double> log_span(const std::vector<UnitLogEntry>& log);

// The workers that ran units, ascending.
std::vector<WorkerId> log_workers(const std::vector<UnitLogEntry>& log);

}  // namespace cerebro
