#pragma once
// The scheduler simulator: a discrete-event simulation of a Cerebro cluster
// that drives the real MopBook and a real SchedulingPolicy (the classes the
// cluster runs) with synthetic unit durations, to compare policies on
// makespan against a lower bound, at scales no real cluster here could run.
//
// Workload (after the Cerebro paper's setting): p = workers partitions of
// equal size, partition p on worker p plus (replicas - 1) other random workers;
// every config trains for a fixed number of epochs. A unit of config c on
// worker w takes  mflops(c) x 3 (forward + backward) x examples per partition /
// (tflops(w) x 1e6)  seconds at peak speed, times 1 + U(0, noise). The policy
// never sees these numbers: it only gets observe() with each committed unit's
// measured time, exactly as ExperimentControl feeds it, and must learn.
//
// Searches (--search): `fixed`, every config trains all epochs; `hyperband`,
// Hyperband's brackets (max epochs R = epochs, reduction factor eta) with a
// synchronous rung barrier per bracket: a config promoted at a rung waits
// until every config of its bracket reached that rung. Which configs are
// promoted is drawn from the seed (a hidden quality per config).
//
// Gangs (--parallelism auto|data): when the policy picks unit u for
// a worker, a GangPlanner (runtime/scheduling/gang_planner.hpp) may add idle
// workers (ones that asked and got nothing) holding other pending partitions
// of u's config. A gang of k lasts its slowest member's unit time plus
// k x steps_per_unit allreduces (allreduce_s x 2(k-1)/k each) plus
// gang_setup_s, commits its k units at once, and fails as a whole when a
// member fails (every unit requeued, the member's worker away for downtime).
//
// Not thread-safe; deterministic for a given seed and policy.

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/ids.hpp"
#include "runtime/scheduling/scheduling_policy.hpp"
#include "runtime/base/status.hpp"
#include "runtime/scheduling/unit_log_check.hpp"
#include "runtime/spec/parallelism.hpp"

namespace cerebro {

enum class Heterogeneity {
  paper,    // worker speeds drawn from {5.6, 11.3, 12.1, 18.7} TFLOPS
  uniform,  // uniform in [5.6, 18.7] TFLOPS
  none,     // every worker 11.925 TFLOPS (the mean of the paper's four)
};
std::string to_string(Heterogeneity h);
inline std::ostream& operator<<(std::ostream& os, Heterogeneity h) { return os << to_string(h); }
// "paper" | "uniform" | "none"; an error names the known values.
Result<Heterogeneity> parse_heterogeneity(const std::string& name);

enum class SimulatedSearch { fixed, hyperband };
std::string to_string(SimulatedSearch s);
// "fixed" | "hyperband"; an error names the known values.
Result<SimulatedSearch> parse_simulated_search(const std::string& name);

struct SimulationOptions {
  int32_t configs = 16;
  int32_t workers = 8;
  int32_t epochs = 10;
  uint64_t seed = 1;
  Heterogeneity heterogeneity = Heterogeneity::paper;
  int32_t replicas = 1;        // holders per partition, 1 .. workers
  double noise = 0;            // a unit runs 1 + U(0, noise) times its nominal time
  double failure_rate = 0;     // per attempt: its worker fails at a random point of it
  double downtime_s = 60;      // a failed worker is back (same partitions) after this
  int64_t examples = 1281167;  // training examples over all partitions (ImageNet-1k)
  bool keep_log = false;       // record every attempt (memory: ~40 bytes per unit)
  // Give the policy each config's true cost as its cost prior before the run
  // (SchedulingPolicy::set_cost_prior), as a real run's probe does.
  bool priors = false;
  // The search: fixed epochs, or Hyperband brackets (then `configs` is rounded
  // up to whole Hyperband iterations: hyperband_configs(epochs, eta) each).
  SimulatedSearch search = SimulatedSearch::fixed;
  int32_t eta = 3;
  // Data-parallel gangs.
  Parallelism parallelism = Parallelism::mop;
  double allreduce_s = 0.08;  // one allreduce between 2 ranks (100 MB of gradients at 10 Gb/s)
  double gang_setup_s = 1;    // forming a gang, per attempt
  int32_t batch_size = 256;   // a config's batch: steps per unit = examples per partition / this
  int32_t max_gang = 8;       // most workers in one gang, 2 .. workers
};
// The configs of one Hyperband iteration with max epochs R and factor eta
// (the sum of its brackets' first rungs).
int32_t hyperband_configs(int32_t max_epochs, int32_t eta);
// options with `configs` as the run will have it (rounded up for hyperband).
SimulationOptions effective_options(const SimulationOptions& options);
// Checks ranges; the error names the option (as a command-line flag).
Status validate(const SimulationOptions& options);

// The synthetic cluster and models a run simulates, drawn from the seed.
struct Workload {
  std::vector<double> config_mflops;  // per example, forward pass
  std::vector<double> worker_tflops;
  std::vector<std::vector<PartitionId>> holdings;  // per worker
  std::vector<std::vector<WorkerId>> holders;      // per partition
  int64_t examples_per_partition = 0;
  int32_t epochs = 0;
  // Epochs each config trains (all `epochs` under fixed; its last rung under
  // hyperband), its bracket, and per bracket the epoch counts at its rung
  // barriers (ascending, below the bracket's last rung). Empty: fixed.
  std::vector<int32_t> config_epochs;
  std::vector<int32_t> config_bracket;
  std::vector<std::vector<int32_t>> bracket_rungs;

  int32_t num_partitions() const { return static_cast<int32_t>(holders.size()); }
  int32_t epochs_of(ConfigId c) const { return config_epochs.empty() ? epochs : config_epochs[c]; }
  // Nominal seconds of one unit of config c on worker w.
  double unit_seconds(ConfigId c, WorkerId w) const;
};
// Config costs: a truncated power law, density ~ x^-0.857 on [360, 21000]
// MFLOPs per example, whose exponent is fitted so the mean is 5,900 like the 35
// CNNs of the Cerebro paper (a log-uniform law would give a mean of 5,076).
Workload make_workload(const SimulationOptions& options);

// A lower bound on any schedule's makespan (failures and noise only add time),
// the largest of three:
struct LowerBound {
  double total_work_s = 0;     // all units' work / the cluster's total speed
  double longest_chain_s = 0;  // the longest config's units in sequence, each
                               // on the fastest holder of its partition
  double worker_load_s = 0;    // the busiest worker's units on partitions no
                               // other worker holds
  double seconds() const;
  // With gangs of up to g members a chain can run at most g times faster:
  // the bound any schedule with such gangs meets.
  double seconds_with_gangs(int32_t max_gang) const;
};
LowerBound lower_bound(const Workload& workload);

struct SimulationReport {
  std::string policy;
  SimulationOptions options;
  int64_t units = 0;            // committed units
  int64_t failed_attempts = 0;  // attempts lost with their worker
  int64_t decisions = 0;        // choose() calls
  double makespan_s = 0;
  LowerBound bound;
  double ratio = 0;             // makespan / lower bound (the MOP bound, also with gangs)
  double ratio_gang_bound = 0;  // makespan / bound.seconds_with_gangs(max_gang), with gangs
  int64_t gangs = 0;            // committed gang attempts
  int64_t gang_units = 0;       // units they covered
  double utilization = 0;       // time workers spent running units / (workers x makespan)
  double decision_latency_p50_us = 0;
  double decision_latency_p99_us = 0;
  int64_t decision_latency_every = 1;  // the percentiles are over every n-th decision
  double wall_s = 0;                   // real time the simulation took
  std::vector<UnitRecord> log;         // with keep_log
  ExpectedRun expected;                // what check_mop_invariants should find in the log

  nlohmann::json to_json() const;
};

class Simulator {
 public:
  // The options must pass validate() and the policy must be one: the caller
  // checks (simulate() does), anything else is a contract violation.
  Simulator(const SimulationOptions& options, std::unique_ptr<SchedulingPolicy> policy);
  // With a given workload instead of one drawn from the options (whose
  // configs, workers and epochs must match it: a contract violation
  // otherwise), e.g. a hand-made cluster.
  Simulator(const SimulationOptions& options, Workload workload, std::unique_ptr<SchedulingPolicy> policy);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  const Workload& workload() const;
  // Runs the whole experiment once. internal if the run stalls (the policy
  // left work undone with every worker idle); a policy that picks a unit the
  // book does not allow breaks MopBook's contract (it aborts).
  Result<SimulationReport> run();

 private:
  class Run;
  SimulationOptions options_;
  Workload workload_;
  std::unique_ptr<SchedulingPolicy> policy_;
};

// Builds the policy by name (make_policy, seeded from options.seed) and runs.
Result<SimulationReport> simulate(const SimulationOptions& options, const std::string& policy);

}  // namespace cerebro
