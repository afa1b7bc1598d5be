#include "runtime/run/run_control.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "runtime/scheduling/scheduling_policy.hpp"
#include "runtime/search/factory.hpp"
#include "runtime/search/ordered_replay.hpp"
#include "runtime/search/replay.hpp"
#include "runtime/spec/steering.hpp"
#include "runtime/store/state_store.hpp"

namespace fs = std::filesystem;

namespace cerebro {

Result<ReplayPolicy::VisitOrder> visit_order_of(const std::string& run_dir) {
  auto store = StateStore::open((fs::path(run_dir) / "state").string(), false);
  if (!store.ok()) return store.status();
  ReplayPolicy::VisitOrder order;
  for (const auto& e : (*store)->unit_log()) {
    auto& epochs = order[e.config];
    if (static_cast<int32_t>(epochs.size()) <= e.epoch) epochs.resize(e.epoch + 1);
    epochs[e.epoch].push_back(e.partition);
  }
  return order;
}

Result<std::vector<std::vector<Unit>>> gangs_of(const std::string& run_dir) {
  auto store = StateStore::open((fs::path(run_dir) / "state").string(), false);
  if (!store.ok()) return store.status();
  std::vector<std::vector<Unit>> gangs;
  int64_t current = 0;
  for (const auto& e : (*store)->unit_log()) {
    // A gang's entries are consecutive, in rank order, and share its id; one
    // left alone (the others rolled back) ran as a unit alone.
    if (e.gang <= 0 || e.rolled_back) {
      current = 0;
      continue;
    }
    if (e.gang != current) gangs.emplace_back();
    current = e.gang;
    gangs.back().push_back(Unit{e.config, e.partition, e.epoch});
  }
  gangs.erase(std::remove_if(gangs.begin(), gangs.end(), [](const auto& g) { return g.size() < 2; }), gangs.end());
  return gangs;
}

std::vector<RecordedEpochEnd> epoch_ends_of(const std::vector<UnitLogEntry>& log, int partitions) {
  std::vector<RecordedEpochEnd> out;
  std::map<std::pair<ConfigId, int32_t>, int> units;  // (config, epoch) -> committed units
  std::map<ConfigId, double> seconds;                 // as ExperimentControl sums them
  for (const auto& e : log) {
    if (e.rolled_back) continue;
    seconds[e.config] += e.train_s;
    if (e.status == UnitStatus::diverged) {
      out.push_back({e.config, e.epoch, true, seconds[e.config]});
    } else if (++units[{e.config, e.epoch}] == partitions) {
      out.push_back({e.config, e.epoch, false, seconds[e.config]});
    }
  }
  return out;
}

Result<std::unique_ptr<SearchProcedure>> replay_proposing_search(const ExperimentSpec& spec, const StateStore& original,
                                                                 int partitions, const ParametersOf& parameters_of) {
  SearchSetup setup;
  setup.default_in_flight = spec.cluster.workers > 0 ? spec.cluster.workers : partitions;
  // What the original was warm-started with, as it kept it (the earlier runs
  // need not be there any more).
  if (auto text = original.get_meta("warm_start")) {
    auto stored = warm_configs_from_json(nlohmann::json::parse(*text, nullptr, false));
    if (!stored.ok()) return stored.status();
    setup.warm = warm_observations(*stored);
  }
  setup.parameters_of = parameters_of;
  auto made = make_search_procedure(spec, {}, setup);
  if (!made.ok()) return made.status();
  return std::unique_ptr<SearchProcedure>(
      std::make_unique<OrderedReplay>(std::move(made).value(), epoch_ends_of(original.unit_log(), partitions)));
}

Result<std::shared_ptr<ExperimentControl>> make_run_control(const ExperimentSpec& spec, const std::string& replay_of,
                                                            const std::vector<ConfigParams>& configs, int partitions,
                                                            const std::vector<WarmConfig>& warm,
                                                            const ParametersOf& parameters_of) {
  std::unique_ptr<SchedulingPolicy> policy;
  if (!replay_of.empty()) {
    auto order = visit_order_of(replay_of);
    if (!order.ok()) return order.status();
    auto replay = ReplayPolicy::create(std::move(order).value());
    if (!replay.ok()) return replay.status().with_context(replay_of);
    policy = std::move(replay).value();
  } else {
    policy = make_policy(spec.cluster.scheduler, spec.seed);  // a kind the spec parser accepted
  }
  const Metric metric = spec.metric;
  std::unique_ptr<SearchProcedure> search;
  if (!replay_of.empty()) {
    // The original run's decisions, re-applied in its visit order.
    auto original = StateStore::open((fs::path(replay_of) / "state").string(), false);
    if (!original.ok()) return original.status();
    std::vector<SearchDecision> recorded;
    for (const auto& d : (*original)->decisions()) {
      // Steps taken by hand (the REPL) are not the search procedure's to re-make.
      if (is_user_action(d)) {
        const bool named = d.contains("action") && d.at("action").is_string();
        return Status::failed_precondition(
            fmt::format("{} was steered by hand ({} in its decision records): a "
                        "replay re-makes only the search procedure's decisions, so it "
                        "cannot reproduce this run",
                        replay_of, named ? d.at("action").get<std::string>() : "an action"));
      }
      auto decision = search_decision_from_json(d);
      if (!decision.ok()) return decision.status().with_context(replay_of);
      recorded.push_back(std::move(decision).value());
    }
    if (spec.search == SearchKind::tpe) {
      auto replayed = replay_proposing_search(spec, **original, partitions, parameters_of);
      if (!replayed.ok()) return replayed.status().with_context(replay_of);
      search = std::move(replayed).value();
    } else {
      auto replay = ReplayDecisions::create(recorded);
      if (!replay.ok()) return replay.status().with_context(replay_of);
      search = std::move(replay).value();
    }
  } else {
    SearchSetup setup;
    setup.default_in_flight = spec.cluster.workers > 0 ? spec.cluster.workers : partitions;
    setup.warm = warm_observations(warm);
    setup.parameters_of = parameters_of;
    auto made = make_search_procedure(spec, configs, setup);
    if (!made.ok()) return made.status();
    search = std::move(made).value();
  }
  auto control = std::make_shared<ExperimentControl>(partitions, spec.seed, metric, spec.cluster.max_unit_retries,
                                                     std::move(policy), std::move(search));
  // A replay re-runs the original's units in its visit order, those of its
  // gangs in the same gangs (ranks as recorded), the others one by one.
  if (replay_of.empty()) {
    control->set_parallelism(spec.cluster.parallelism, gang_costs(spec.cluster));
  } else {
    auto gangs = gangs_of(replay_of);
    if (!gangs.ok()) return gangs.status();
    if (auto recorded = control->set_recorded_gangs(*gangs); !recorded.ok())
      return recorded.with_context(replay_of + ": its unit log's gangs");
  }
  return control;
}

GangCosts gang_costs(const ClusterSpec& cluster) {
  GangCosts costs;
  // 0: as many as the idle holders allow (the planner stops at the candidates).
  costs.max_gang = cluster.max_gang > 0 ? cluster.max_gang : 1 << 20;
  costs.allreduce_known = false;  // measured by a probe or by the run's own gangs
  return costs;
}

Status check_gang_size(const ClusterSpec& cluster, int workers) {
  if (cluster.max_gang > workers)
    return Status::invalid_argument(fmt::format(
        "[cluster] max_gang = {} is larger than the {} worker(s) holding partitions: a gang's members are workers "
        "holding the partitions it trains on (give at most {}, or 0 for as many as there are)",
        cluster.max_gang, workers, workers));
  return Status::ok_status();
}

}  // namespace cerebro
