#include "runtime/sim/from_run.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace cerebro {

namespace {
// Workload::unit_seconds is mflops x kTrainingPasses x examples / (tflops x
// 1e6); with every worker at 1 TFLOPS a config's mflops per example follow
// from its unit seconds.
constexpr double kTrainingPasses = 3;
}  // namespace

Result<RunWorkload> workload_from_log(const std::vector<UnitLogEntry>& log, const CostPriors& priors, uint64_t seed) {
  std::map<ConfigId, std::pair<double, int64_t>> spans;  // sum of spans, units
  std::map<ConfigId, std::set<std::pair<int32_t, PartitionId>>> units;
  std::map<WorkerId, std::set<PartitionId>> ran;
  std::set<PartitionId> partitions;
  int64_t examples = 0, counted = 0;
  RunWorkload run;
  double first = 0, last = 0;
  for (const auto& e : log) {
    if (e.rolled_back) continue;
    if (counted == 0 || e.start_s < first) first = e.start_s;
    if (counted == 0 || e.end_s > last) last = e.end_s;
    auto& [sum, n] = spans[e.config];
    // The worker's time: its commit runs while the worker trains on.
    sum += std::max(0.0, e.worker_end_s() - e.start_s);
    ++n;
    units[e.config].insert({e.epoch, e.partition});
    ran[e.worker].insert(e.partition);
    partitions.insert(e.partition);
    examples += e.examples;
    ++counted;
  }
  if (counted == 0) return Status::failed_precondition("the run's unit log has no committed units to simulate");
  const auto num_partitions = static_cast<int32_t>(partitions.size());
  if (*partitions.begin() != 0 || *partitions.rbegin() != num_partitions - 1)
    return Status::failed_precondition(
        fmt::format("the run's units cover partitions {}..{} but only {} of them: a "
                    "partition never trained cannot be simulated",
                    *partitions.begin(), *partitions.rbegin(), num_partitions));
  int32_t epochs = -1;
  for (const auto& [c, done] : units) {
    int32_t config_epochs = static_cast<int32_t>(done.size()) / num_partitions;
    if (static_cast<int32_t>(done.size()) % num_partitions != 0 || done.rbegin()->first != config_epochs - 1)
      return Status::failed_precondition(
          fmt::format("config {} trained {} units, not whole epochs over {} "
                      "partitions: only runs whose configs all trained every epoch "
                      "can be simulated",
                      c, done.size(), num_partitions));
    if (epochs >= 0 && config_epochs != epochs)
      return Status::failed_precondition(
          fmt::format("config {} trained {} epochs and config {} {}: the simulator "
                      "trains every config for the same epochs (no early stopping)",
                      c, config_epochs, units.begin()->first, epochs));
    epochs = config_epochs;
  }
  Workload& wl = run.workload;
  wl.epochs = epochs;
  wl.examples_per_partition = std::max<int64_t>(1, examples / counted);
  for (const auto& [c, span] : spans) {
    double unit_seconds = span.first / static_cast<double>(span.second);
    wl.config_mflops.push_back(unit_seconds * 1e6 / (kTrainingPasses * static_cast<double>(wl.examples_per_partition)));
    if (auto prior = priors.seconds_per_example(c)) {
      if (auto set = run.priors.set(static_cast<ConfigId>(run.configs.size()), *prior); !set.ok()) return set;
    }
    run.configs.push_back(c);
  }
  wl.holders.resize(static_cast<size_t>(num_partitions));
  for (const auto& [w, held] : ran) {
    auto index = static_cast<WorkerId>(run.workers.size());
    run.workers.push_back(w);
    wl.worker_tflops.push_back(1.0);
    wl.holdings.emplace_back(held.begin(), held.end());
    for (PartitionId p : held) wl.holders[static_cast<size_t>(p)].push_back(index);
  }
  SimulationOptions& o = run.options;
  o.configs = static_cast<int32_t>(run.configs.size());
  o.workers = static_cast<int32_t>(run.workers.size());
  o.epochs = epochs;
  o.seed = seed;
  o.heterogeneity = Heterogeneity::none;
  o.examples = std::max<int64_t>(wl.examples_per_partition * num_partitions, o.workers);
  o.keep_log = true;
  run.real_makespan_s = last - first;
  return run;
}

Result<RunComparison> simulate_run(const RunWorkload& run, const std::string& policy) {
  auto built = make_policy(policy, run.options.seed);
  if (!built.ok()) return built.status().with_context("--policy");
  if (auto valid = validate(run.options); !valid.ok()) return valid;
  run.priors.apply_to(**built);
  RunComparison out;
  auto simulated = Simulator(run.options, run.workload, std::move(built).value()).run();
  if (!simulated.ok()) return simulated.status();
  out.simulated = std::move(simulated).value();
  out.real_makespan_s = run.real_makespan_s;
  out.ratio = run.real_makespan_s > 0 ? out.simulated.makespan_s / run.real_makespan_s : 0;
  return out;
}

}  // namespace cerebro
