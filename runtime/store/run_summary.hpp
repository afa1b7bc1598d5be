#pragma once
// What a finished run leaves for people: summary.json, metrics.csv and the
// leaderboard, all derived from the state store's configs and unit log.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/spec/metric.hpp"
#include "runtime/store/state_store.hpp"

namespace cerebro {

struct RunFacts {
  std::string experiment;
  uint64_t seed = 0;
  int workers = 0;
  int partitions = 0;
  int epochs = 0;
  std::string metric = "val_accuracy";
  std::string metric_goal = "maximize";  // "maximize" | "minimize"
  double wall_s = 0;
  double unit_span_s = 0;
};

// A config's standing: its metric after its last validated epoch.
struct Standing {
  ConfigId id = 0;
  ConfigStatus status = ConfigStatus::running;
  std::string error;  // why it failed, for failed configs
  nlohmann::json params;
  std::vector<EpochMetrics> epochs;
  std::optional<double> metric;  // none when it never validated
};

// The unit log split by config, each config's entries in log order: what
// per-config reads walk, so a view of many configs reads the log once
// instead of once per config.
std::map<ConfigId, std::vector<UnitLogEntry>> units_by_config(const std::vector<UnitLogEntry>& log);

// Configs ranked best first by the metric (unranked ones last, by id; a
// config whose validation lacks the metric is unranked). Linear in the log.
std::vector<Standing> rank_configs(const std::vector<ConfigRecord>& configs, const std::vector<UnitLogEntry>& log,
                                   const Metric& metric);
// The same with the metric's stored name (metric_from_record: a template's
// metric ranks higher-is-better unless stored_metric is used).
std::vector<Standing> rank_configs(const std::vector<ConfigRecord>& configs, const std::vector<UnitLogEntry>& log,
                                   const std::string& metric);

// The run's metric as its store records it (meta "metric" and "metric_goal").
Metric stored_metric(const StateStore& store);
// Records `metric` in the store's meta (what stored_metric reads).
void store_metric(StateStore& store, const Metric& metric);

// An epoch's named validation values as summary.json and metrics.csv show them
// ("val_accuracy", "val_r2" ...; without named values, as recorded before
// them: val_accuracy), the loss not included.
std::vector<std::pair<std::string, double>> named_values(const EpochMetrics& epoch);

// unit_compute_s: seconds of training and validation. The units keep their
// workers from the dispatch (start_s) to the result's arrival (result_s),
// then their commit runs while the worker trains its next unit:
//  - unit_occupied_s: the sum of the units' start_s .. result_s;
//  - hop_overhead_fraction: 1 - unit_compute_s / unit_occupied_s, the share
//    of the workers' occupied time spent on anything but computing (state
//    fetch and transfer, restore and save, the result's transfer);
//  - unit_span_s: the sum of the units' dispatch-to-durable-acknowledgement
//    times the scheduler measured, and span_overhead_fraction: 1 -
//    unit_compute_s / unit_span_s, the figure hop_overhead_fraction was before
//    commits overlapped the next unit (it includes the commit), kept so runs
//    stay comparable.
struct UnitTimes {
  double unit_compute_s = 0;
  double unit_span_s = 0;
  double hop_overhead_fraction = 0;
  double unit_occupied_s = 0;
  double span_overhead_fraction = 0;
};
UnitTimes unit_times(const std::vector<UnitLogEntry>& log, double unit_span_s);

// How the schedule used the workers, from the unit log: each unit keeps its
// worker busy from its dispatch (start_s) to its result's arrival (result_s;
// its commit then runs while the worker is free), and the run ends with the
// last durable commit (end_s).
//  - tail_start_s: the last moment every one of `workers` workers was busy at
//    once (the first dispatch if that never happened);
//  - tail_idle_worker_s: the idle worker-seconds from tail_start_s to the last
//    commit (end_s): workers x that stretch - the busy time in it. A run whose
//    workers finish together has about one unit's share; a run that leaves a
//    worker idle while one config's last units run one after the other has
//    that whole stretch (tools/show prints the lanes).
//  - idle_at_end_s: per worker (ascending ids, those in the log), the last
//    commit minus the moment the worker was freed for the last time.
struct ScheduleTail {
  double first_start_s = 0;
  double last_end_s = 0;
  double tail_start_s = 0;
  double tail_idle_worker_s = 0;
  std::vector<std::pair<WorkerId, double>> idle_at_end_s;
};
// `workers` <= 0: the distinct workers of the log.
ScheduleTail schedule_tail(const std::vector<UnitLogEntry>& log, int workers);

// wall / (unit compute / workers): 1 when the workers computed all the time.
double makespan_over_compute(double wall_s, double unit_compute_s, int workers);

// How config trained, for summary.json: {"units_alone": n,
// "gang_units": m, "gangs": {"<k>": gangs of k members}}, rolled-back units
// excluded; a config with pipeline units also has "pipeline_units": p and
// "pipeline": "pipeline over k stages" (its stage count; pipeline_stages: k).
nlohmann::json how_trained(const std::vector<UnitLogEntry>& log, ConfigId config);

// summary.json. `best` is filled by the caller once the test set is scored.
nlohmann::json build_summary(const RunFacts& facts, const std::vector<Standing>& ranked,
                             const std::vector<UnitLogEntry>& log, const nlohmann::json& best);

// One row per config epoch: config,epoch,status,train_loss,val_loss,<each named
// value, e.g. val_accuracy,val_macro_f1 or val_mse,val_mae,val_r2>,seconds,params
std::string metrics_csv(const std::vector<Standing>& ranked);

// A fixed-width text table, best first.
std::string format_leaderboard(const std::vector<Standing>& ranked, const std::string& metric, size_t max_rows);

}  // namespace cerebro
