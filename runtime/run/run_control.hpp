#pragma once
// The ExperimentControl a run is scheduled by: the spec's scheduling policy
// and search procedure, or, for a replay, the original run's visit order and
// recorded decisions. Used when a run starts and again when it resumes.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/base/status.hpp"
#include "runtime/scheduling/experiment_control.hpp"
#include "runtime/scheduling/replay_policy.hpp"
#include "runtime/search/ordered_replay.hpp"
#include "runtime/store/state_store.hpp"
#include "runtime/run/warm_start.hpp"
#include "runtime/search/search_space.hpp"
#include "runtime/spec/spec.hpp"

namespace cerebro {

// Receives the human lines of a run's setup, recovery and finishing.
using Say = std::function<void(const std::string&)>;

// `replay_of`: a finished run directory whose visit order and decisions to
// re-execute; empty for an ordinary run. `warm`: what the run is warm-started
// with (tpe takes it as observations). `parameters_of`: a config's trainable
// parameters (tpe with the objective `parameters`; the runner's model builder).
using ParametersOf = std::function<Result<double>(const nlohmann::json& params)>;
Result<std::shared_ptr<ExperimentControl>> make_run_control(const ExperimentSpec& spec, const std::string& replay_of,
                                                            const std::vector<ConfigParams>& configs, int partitions,
                                                            const std::vector<WarmConfig>& warm = {},
                                                            const ParametersOf& parameters_of = nullptr);

// The gang planner's costs from the spec's [cluster]: max_gang;
// the allreduce cost and the steps per unit are learnt from the run's gangs.
GangCosts gang_costs(const ClusterSpec& cluster);
// [cluster] max_gang against the workers holding partitions: a gang larger
// than them cannot form, which is a clear error (invalid_argument).
Status check_gang_size(const ClusterSpec& cluster, int workers);

// Replaying a run whose search proposes its configs as it goes (tpe): the
// spec's procedure built again (with the original's stored warm start),
// hearing the original's epoch ends in its order (runtime/search/ordered_replay.hpp).
std::vector<RecordedEpochEnd> epoch_ends_of(const std::vector<UnitLogEntry>& log, int partitions);
Result<std::unique_ptr<SearchProcedure>> replay_proposing_search(const ExperimentSpec& spec, const StateStore& original,
                                                                 int partitions, const ParametersOf& parameters_of);

// The per-config visit order of a finished run, from its unit log.
Result<ReplayPolicy::VisitOrder> visit_order_of(const std::string& run_dir);
// The data-parallel gangs of a finished run, from its unit log: each gang's
// units in rank order (what a replay forms again).
Result<std::vector<std::vector<Unit>>> gangs_of(const std::string& run_dir);

}  // namespace cerebro
