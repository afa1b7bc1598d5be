#pragma once
// Recovering an unfinished run so it resumes where it stopped, from its state
// store alone: each config's latest state is checked (a damaged one falls
// back to the newest intact state and the units after it run again), the
// unit log is replayed into a fresh ExperimentControl, so no committed unit
// runs again and every search decision is re-derived; a person's steps (the
// REPL) are history and are kept.
//
// The shell (actors/experiment_runner.cpp) opens the store, calls
// resumable_spec, loads the prepared data (it knows the partition count),
// then calls recover_run, and trains with what it returns.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/base/status.hpp"
#include "runtime/run/run_control.hpp"
#include "runtime/store/state_store.hpp"

namespace cerebro {

// The spec a run directory was started with (from its state store).
Result<ExperimentSpec> spec_of_run(const StateStore& store, const std::string& run_dir);
// The same, opening the run's store (only one process may have it open).
Result<ExperimentSpec> spec_of_run(const std::string& run_dir);

// The spec of a run that can resume; an error for a finished run.
Result<ExperimentSpec> resumable_spec(const StateStore& store, const std::string& run_dir);

struct RecoveredRun {
  std::shared_ptr<ExperimentControl> control;
  std::vector<ConfigParams> configs;            // every config of the run
  std::map<ConfigId, std::string> params_json;  // the configs that go on
  int64_t units_done = 0;                       // committed units replayed
};

// Rebuilds the run's control and writes what recovery decides to the store:
// the re-derived decisions (with the person's steps kept) and one more
// "resumes". Warnings (a config that cannot resume, a damaged state fallen
// back from) go to `say`. `replay_of` as for make_run_control.
Result<RecoveredRun> recover_run(StateStore& store, const ExperimentSpec& spec, const std::string& replay_of,
                                 int partitions, const std::string& run_dir, const Say& say,
                                 const ParametersOf& parameters_of = nullptr);

}  // namespace cerebro
