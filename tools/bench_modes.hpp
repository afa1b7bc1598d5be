#pragma once
// What `cerebro bench` measures besides the reference workload (issue 11):
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
  double hop_overhead_fraction = 0;  // over the workers' time (issue 11: commits overlap the next unit)
  double span_overhead_fraction = 0;  // over dispatch-to-durable spans: hop_overhead_fraction before issue 11
  double unit_compute_s = 0;
};
UnitOverhead unit_overhead(const nlohmann::json& summary);

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

}  // namespace cerebro::bench
