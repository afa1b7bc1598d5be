#pragma once
// What `cerebro bench` measures besides the reference workload:
//   --small-units  the fixed cost of a unit whose state is under 1 MB (16
//                  random small MLPs x 2 partitions x 3 epochs, 20,000
//                  Fashion-MNIST examples), from each run's unit spans;
//   --parity       the same units on the embedded cluster and on a
//                  coordinator with 1-worker agent processes on loopback, in
//                  interleaved pairs, plus the 10 MB hop through the guard.
// Both repeat their runs inside one invocation (the VM's speed drifts) and
// report medians.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/status.hpp"
#include "runtime/store/state_store.hpp"
#include "tools/child_process.hpp"

namespace cerebro::bench {

double percentile(std::vector<double> v, double q);
double median(std::vector<double> v);

// A unit's fixed cost from a run's summary.json: the span from dispatch to the
// durable acknowledgement, minus training and validation, per unit.
struct UnitOverhead {
  int64_t units = 0;
  double compute_ms_per_unit = 0;
  double overhead_ms_per_unit = 0;
  double hop_overhead_fraction = 0;   // over the workers' time (commits overlap the next unit)
  double span_overhead_fraction = 0;  // over dispatch-to-durable spans (the commit included)
  double unit_compute_s = 0;
};
UnitOverhead unit_overhead(const nlohmann::json& summary);

// Where a run's non-compute time went, from its unit log (means per unit, ms):
// on the worker's path, dispatch (start_s) to result (result_s), split into
// restore (model build + state load), save, and the rest (the state read, the
// task and result messages, leases); then the commit after the result
// (result_s to end_s, off the worker's path) and the worker's idle time
// between its result and its next dispatch (the policy's decision included).
struct UnitPhases {
  int64_t units = 0;
  double compute_ms = 0;  // train + validate
  double restore_ms = 0, save_ms = 0;
  double rest_ms = 0;                       // occupied - compute - restore - save
  double rest_p50_ms = 0, rest_p90_ms = 0;  // its spread over the units (a few long waits, or every unit?)
  std::vector<double> rest_by_epoch_ms;     // its mean per epoch (the first reads states from the store)
  double rest_first_units_ms = 0, rest_later_units_ms = 0;  // its mean over each config's first unit, and the others
  double occupied_fixed_ms = 0;                             // occupied - compute: the fixed cost over the workers' time
  double commit_ms = 0;                                     // result to durable (the synced write's start)
  double idle_between_ms = 0;                               // a worker's result to its next dispatch, per unit
  double wall_s = 0;
  double makespan_over_compute = 0;
};
// `log`: the run's unit log; `summary`: its summary.json (wall, workers).
UnitPhases unit_phases(const std::vector<UnitLogEntry>& log, const nlohmann::json& summary);
Result<UnitPhases> unit_phases_of(const std::string& run_dir);
// The phases of existing runs (e.g. made by an older binary): `cerebro bench --phases DIR...`.
int print_phases(const std::vector<std::string>& run_dirs);

// A coordinator (behind its frame guard) and `agents` agents with one worker
// each, this binary as child processes on a free loopback port; stopped when
// destroyed.
class BenchCluster {
 public:
  static Result<std::unique_ptr<BenchCluster>> start(const std::string& dir, int agents);
  // Submits the spec as a client and returns the run's summary.json.
  Result<nlohmann::json> run(const std::string& spec_path, const std::string& run_dir) const;
  // Round trips of a `bytes` state to the coordinator process and its
  // acknowledgement through the guard, in ms (the first, warming up, dropped).
  Result<std::vector<double>> hop_ms(int samples, size_t bytes) const;

 private:
  std::string dir_, port_, token_path_;
  std::unique_ptr<e2e::ChildProcess> coordinator_;
  std::vector<std::unique_ptr<e2e::ChildProcess>> agents_;
};

struct ModeOptions {
  std::string out_dir;
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  int runs = 3;           // --small-units: runs; --parity: pairs
  bool cluster = false;   // --small-units: also on agent processes
  int hop_samples = 200;  // --parity: 10 MB hops through the guard
  std::string json_path;
};

// The bench's grid ({mlp, cnn} x lr {1e-3, 3e-4} x batch {64, 256}, Adam) as a
// spec (TOML text); the reference workload and the parity mode both train it.
std::string grid_bench_spec(const std::string& name, int epochs, const std::string& data_dir, int64_t limit,
                            int workers);
// The experiment specs of the two modes (TOML text).
std::string small_units_spec(const std::string& data_dir);
std::string parity_spec(const std::string& data_dir);

int run_small_units(const ModeOptions& o);
int run_parity(const ModeOptions& o);
// `--tokens`: a transformer unit's tokens per second against a plain LibTorch loop over the same model and
// batches, --runs interleaved pairs on one thread (tools/bench_tokens.cpp).
int run_tokens(const ModeOptions& o);

}  // namespace cerebro::bench
