// The simulator's entry points: a Simulator checks its options and workload
// and runs them (simulator_run.hpp holds the run itself), and simulate()
// builds the policy by name.
#include "runtime/sim/simulator.hpp"

#include <fmt/format.h>

#include "runtime/scheduling/randomized_policy.hpp"
#include "runtime/sim/simulator_run.hpp"

namespace cerebro {

Simulator::Simulator(const SimulationOptions& options, std::unique_ptr<SchedulingPolicy> policy)
    : options_(effective_options(options)), policy_(std::move(policy)) {
  Status valid = validate(options_);
  if (!valid.ok()) throw Error(valid.message());
  if (!policy_) throw Error("Simulator: no policy");
  workload_ = make_workload(options_);
}

Simulator::Simulator(const SimulationOptions& options, Workload workload, std::unique_ptr<SchedulingPolicy> policy)
    : options_(options), workload_(std::move(workload)), policy_(std::move(policy)) {
  Status valid = validate(options_);
  if (!valid.ok()) throw Error(valid.message());
  if (!policy_) throw Error("Simulator: no policy");
  if (workload_.config_mflops.size() != static_cast<size_t>(options.configs) ||
      workload_.worker_tflops.size() != static_cast<size_t>(options.workers) ||
      workload_.holdings.size() != static_cast<size_t>(options.workers) || workload_.holders.empty() ||
      workload_.epochs != options.epochs) {
    throw Error(fmt::format("Simulator: the workload ({} configs, {} workers, {} epochs) does not match the options "
                            "({} configs, {} workers, {} epochs)",
                            workload_.config_mflops.size(), workload_.worker_tflops.size(), workload_.epochs,
                            options.configs, options.workers, options.epochs));
  }
}

Simulator::~Simulator() = default;

const Workload& Simulator::workload() const { return workload_; }

SimulationReport Simulator::run() { return Run(options_, workload_, *policy_).execute(); }

Result<SimulationReport> simulate(const SimulationOptions& options, const std::string& policy) {
  Status valid = validate(options);
  if (!valid.ok()) return valid;
  std::unique_ptr<SchedulingPolicy> built;
  try {
    built = make_policy(policy, options.seed);
  } catch (const Error& e) {
    return Status::error(fmt::format("--policy: {}", e.what()));
  }
  try {
    if (options.priors) {
      Workload workload = make_workload(options);
      for (ConfigId c = 0; c < options.configs; ++c) {
        // Seconds per example on a 1 TFLOPS worker: the policy learns speeds as ratios.
        built->set_cost_prior(c, workload.unit_seconds(c, 0) * workload.worker_tflops[0] /
                                     static_cast<double>(workload.examples_per_partition));
      }
      return Simulator(options, std::move(workload), std::move(built)).run();
    }
    return Simulator(options, std::move(built)).run();
  } catch (const Error& e) {
    return Status::error(e.what());
  }
}

}  // namespace cerebro
