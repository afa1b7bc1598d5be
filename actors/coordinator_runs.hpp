#pragma once
// What the coordinator starts and reads in production (coordinator_parts in
// actors/coordinator.hpp): the runner of an experiment in a thread of its
// own, the runs of its state directory, and a run's files for its
// clients. Kept apart from the gateway's shell: these train, open RocksDB
// and read files.

#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/coordinator.hpp"
#include "actors/experiment_runner.hpp"

namespace cerebro {

// Runs one experiment in its own (blocking, detached) actor so the gateway
// stays responsive. The runner shares nothing with the gateway: it reports
// by message, and the gateway keeps the status table and tells the clients.
void start_run_thread(caf::local_actor* gateway, const RunOptions& options, const ClusterView& cluster);

// The experiments under <state_dir>/experiments: unfinished (a store not marked finished) and finished
// ones; a store that cannot be opened is logged and skipped.
std::vector<StoredRun> find_stored_runs(const std::string& state_dir);

// Every run directory (one with a state/ store) under `dir`, up to `depth` folders down, as finished runs
// to read (`cerebro ui DIR`): an embedded run's directory, a coordinator's experiments/<id>/, the folder
// `run --ui` printed. A run still going is read as it was then; a store that cannot be opened is logged
// and left out.
std::vector<StoredRun> find_runs_under(const std::string& dir, int depth = 4);

// The run files a client receives when the experiment ends: summary.json,
// metrics.csv, best_model.pt, spec.toml and the TensorBoard logs, those
// that exist; only the error (its text and code) when the run failed.
run_files run_files_of(const std::string& experiment, const std::string& run_dir, const Status& outcome);

}  // namespace cerebro
