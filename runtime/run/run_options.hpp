#pragma once
// What a run is asked to do: the spec, where its directory is, and whether it
// resumes or replays. Plain data, read by the run's set-up
// (models/run_setup.hpp) and by the actors that train it
// (actors/experiment_runner.hpp).

#include <string>

#include "runtime/spec/spec.hpp"

namespace cerebro {

struct RunOptions {
  ExperimentSpec spec;
  std::string experiment_id = "run";  // names the experiment's partitions on the agents
  std::string out_dir;                // must not exist or be empty
  int workers = 0;                    // 0: spec's [cluster] workers, else one per core
  std::string prepared_data_dir;      // reuse prepared partitions (replay) instead of preparing
  std::string replay_of;              // a finished run directory whose visit order to re-execute
  // Resume the unfinished run in out_dir (its spec, data and configs come
  // from there; `spec` is ignored).
  bool resume = false;
};

}  // namespace cerebro
