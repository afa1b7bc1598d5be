#pragma once
// Simulating a real run, to compare the simulator's makespan with the one the
// run measured (`cerebro simulate --from-run RUN_DIR`).
//
// The run's unit log becomes the workload: each config's units take its mean
// measured worker time (dispatch to the result's arrival, so the hop overhead
// is in it; the commit runs while the worker trains on),
// every worker is equally fast and holds the partitions it ran units on, and
// every config trains the epochs it trained. The policy gets the cost priors
// the run started with (its store's meta "cost_priors"), as the real policy
// did, and learns the rest from the simulated units like the real one learned
// from measured ones. Only fixed-epoch runs (every config the same epochs,
// e.g. grid or random search without failures) can be simulated: the
// simulator has no search procedure.

#include <string>
#include <vector>

#include "runtime/base/status.hpp"
#include "runtime/scheduling/cost_prior.hpp"
#include "runtime/sim/simulator.hpp"
#include "runtime/store/state_store.hpp"

namespace cerebro {

struct RunWorkload {
  SimulationOptions options;
  Workload workload;
  CostPriors priors;              // by simulated config (0 .. configs-1)
  std::vector<ConfigId> configs;  // the run's id of each simulated config
  std::vector<WorkerId> workers;  // the run's id of each simulated worker
  double real_makespan_s = 0;     // the log's first dispatch to its last commit
};

// The workload of the run whose (committed, not rolled back) units are `log`;
// `priors` by the run's config ids. An error says why the run cannot be
// simulated (empty log, configs with different epochs, a unit missing).
Result<RunWorkload> workload_from_log(const std::vector<UnitLogEntry>& log, const CostPriors& priors, uint64_t seed);

struct RunComparison {
  SimulationReport simulated;
  double real_makespan_s = 0;
  double ratio = 0;  // simulated / real makespan
};
// Simulates `run` once with `policy` (make_policy's names), the priors given.
Result<RunComparison> simulate_run(const RunWorkload& run, const std::string& policy);

}  // namespace cerebro
