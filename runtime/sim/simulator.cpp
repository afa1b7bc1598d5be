// The simulator's entry points: a Simulator checks its options and workload
// and runs them (simulator_run.hpp holds the run itself), and simulate()
// builds the policy by name.
#include "runtime/sim/simulator.hpp"

#include <fmt/format.h>

#include "runtime/scheduling/randomized_policy.hpp"
#include "runtime/sim/simulator_run.hpp"

namespace cerebro {

namespace {

// The constructors' preconditions: checked options, a policy.
void require_checked(const SimulationOptions& options, const SchedulingPolicy* policy) {
  if (auto valid = validate(options); !valid.ok()) contract_violation("Simulator", valid.message());
  if (!policy) contract_violation("Simulator", "no policy");
}

}  // namespace

Simulator::Simulator(const SimulationOptions& options, std::unique_ptr<SchedulingPolicy> policy)
    : options_(effective_options(options)), policy_(std::move(policy)) {
  require_checked(options_, policy_.get());
  workload_ = make_workload(options_);
}

Simulator::Simulator(const SimulationOptions& options, Workload workload, std::unique_ptr<SchedulingPolicy> policy)
    : options_(options), workload_(std::move(workload)), policy_(std::move(policy)) {
  require_checked(options_, policy_.get());
  if (workload_.config_mflops.size() != static_cast<size_t>(options.configs) ||
      workload_.worker_tflops.size() != static_cast<size_t>(options.workers) ||
      workload_.holdings.size() != static_cast<size_t>(options.workers) || workload_.holders.empty() ||
      workload_.epochs != options.epochs) {
    contract_violation("Simulator",
                       fmt::format("the workload ({} configs, {} workers, {} epochs) does not match the options "
                                   "({} configs, {} workers, {} epochs)",
                                   workload_.config_mflops.size(), workload_.worker_tflops.size(), workload_.epochs,
                                   options.configs, options.workers, options.epochs));
  }
}

Simulator::~Simulator() = default;

const Workload& Simulator::workload() const { return workload_; }

Result<SimulationReport> Simulator::run() { return Run(options_, workload_, *policy_).execute(); }

Result<SimulationReport> simulate(const SimulationOptions& options, const std::string& policy) {
  Status valid = validate(options);
  if (!valid.ok()) return valid;
  auto built = make_policy(policy, options.seed);
  if (!built.ok()) return built.status().with_context("--policy");
  if (options.priors) {
    Workload workload = make_workload(options);
    for (ConfigId c = 0; c < options.configs; ++c) {
      // Seconds per example on a 1 TFLOPS worker: the policy learns speeds as ratios.
      (*built)->set_cost_prior(c, workload.unit_seconds(c, 0) * workload.worker_tflops[0] /
                                      static_cast<double>(workload.examples_per_partition));
    }
    return Simulator(options, std::move(workload), std::move(built).value()).run();
  }
  return Simulator(options, std::move(built).value()).run();
}

}  // namespace cerebro
