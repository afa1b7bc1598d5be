#include "runtime/run/run_recovery.hpp"

#include <cstdlib>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "runtime/run/warm_start.hpp"
#include "runtime/scheduling/cost_prior.hpp"
#include "runtime/spec/spec.hpp"
#include "runtime/spec/steering.hpp"

namespace fs = std::filesystem;

namespace cerebro {

Result<ExperimentSpec> spec_of_run(const StateStore& store, const std::string& run_dir) {
  auto text = store.get_meta("spec");
  if (!text) return Status::not_found(fmt::format("{}: the run's spec is not in its state store", run_dir));
  // The data roots its relative paths fell back to when it was submitted (ExperimentSpec::search_dirs).
  std::vector<std::string> search_dirs;
  if (auto dirs = store.get_meta("spec_search_dirs")) {
    auto parsed = nlohmann::json::parse(*dirs, nullptr, false);
    if (!parsed.is_array())
      return Status::corruption(fmt::format("{}: the run's spec_search_dirs is damaged", run_dir));
    for (const auto& dir : parsed)
      if (dir.is_string()) search_dirs.push_back(dir.get<std::string>());
  }
  auto datasets = nlohmann::json::object();
  if (auto kept = store.get_meta("spec_datasets")) {
    datasets = nlohmann::json::parse(*kept, nullptr, false);
    if (!datasets.is_object())
      return Status::corruption(fmt::format("{}: the run's spec_datasets is damaged", run_dir));
  }
  return parse_spec_string(*text, store.get_meta("spec_dir").value_or(""), (fs::path(run_dir) / "spec.toml").string(),
                           search_dirs, datasets);
}

Result<ExperimentSpec> spec_of_run(const std::string& run_dir) {
  auto store = StateStore::open((fs::path(run_dir) / "state").string(), false);
  if (!store.ok()) return Status::of(store.code(), store.error() + " (is this a run directory?)");
  return spec_of_run(**store, run_dir);
}

Result<ExperimentSpec> resumable_spec(const StateStore& store, const std::string& run_dir) {
  if (store.get_meta("finished") == std::optional<std::string>("true"))
    return Status::failed_precondition(
        fmt::format("{}: the run has finished; nothing to resume (see cerebro show)", run_dir));
  return spec_of_run(store, run_dir);
}

Result<RecoveredRun> recover_run(StateStore& store, const ExperimentSpec& spec, const std::string& replay_of,
                                 int partitions, const std::string& run_dir, const Say& say,
                                 const ParametersOf& parameters_of) {
  RecoveredRun r;
  auto records = store.configs();
  for (const auto& record : records) r.configs.push_back(ConfigParams{record.id, record.params});
  store.set_keep_epoch_states(spec.search == SearchKind::pbt);
  std::vector<WarmConfig> warm;
  if (auto text = store.get_meta("warm_start")) {
    auto stored = warm_configs_from_json(nlohmann::json::parse(*text, nullptr, false));
    if (!stored.ok()) return stored.status().with_context(run_dir);
    warm = std::move(stored).value();
  }
  // tpe proposes its configs as it goes: the restore below re-derives the
  // proposals, and the recorded configs join as they are re-proposed.
  const bool proposes = spec.search == SearchKind::tpe;
  auto control = make_run_control(spec, replay_of, proposes ? std::vector<ConfigParams>{} : r.configs, partitions, warm,
                                  parameters_of);
  if (!control.ok()) return control.status();
  r.control = *control;
  // The priors the run started with (a run from before priors has none).
  if (auto text = store.get_meta("cost_priors")) {
    auto priors = CostPriors::from_json(nlohmann::json::parse(*text, nullptr, false));
    if (priors.ok()) {
      priors->apply_to(*r.control);
    } else {
      say(fmt::format("warning: {}: the stored cost priors are unreadable ({}); scheduling without them", run_dir,
                      priors.error()));
    }
  }

  std::set<ConfigId> live;
  std::vector<ConfigRecord> recorded;
  for (auto record : records) {
    if (record.status == ConfigStatus::failed) {
      if (proposes)
        recorded.push_back(record);
      else
        r.control->reject_config(record.id, record.error);
      continue;
    }
    auto recovered = store.recover_latest_state(record.id);
    if (!recovered.ok()) {
      say(fmt::format("warning: config {} cannot resume: {}", record.id, recovered.error()));
      if (proposes) {
        record.status = ConfigStatus::failed;
        record.error = recovered.error();
        recorded.push_back(record);
      } else {
        r.control->reject_config(record.id, recovered.error());
      }
      continue;
    }
    if (recovered->fell_back) {
      std::vector<std::string> units;
      for (const auto& e : recovered->rolled_back)
        units.push_back(fmt::format("seq {} ({})", e.seq, to_string(Unit{e.config, e.partition, e.epoch})));
      say(fmt::format("warning: config {}: {}; falling back to {}; {} unit(s) run again: {}", record.id,
                      recovered->problem,
                      recovered->intact_seq ? fmt::format("its state after seq {}", recovered->intact_seq)
                                            : std::string("its initial state"),
                      units.size(), fmt::join(units, ", ")));
    }
    if (proposes)
      recorded.push_back(record);
    else
      r.control->add_config(record.id, spec.epochs);
    r.params_json[record.id] = record.params.dump();
    live.insert(record.id);
  }
  if (proposes) r.control->set_recorded_configs(recorded);
  std::vector<UnitLogEntry> log;
  for (const auto& e : store.unit_log())
    if (live.count(e.config)) log.push_back(e);
  auto restored_or = r.control->restore(log);
  if (!restored_or.ok()) return Status::of(restored_or.code(), fmt::format("{}: {}", run_dir, restored_or.error()));
  const ExperimentControl::Restored& restored = *restored_or;
  r.units_done = restored.units;
  // Configs a person stopped (the REPL) stay stopped; their committed units
  // are kept like everyone's.
  for (const auto& record : records)
    if (record.status == ConfigStatus::stopped && live.count(record.id)) r.control->stop_config(record.id);
  r.control->take_user_actions();  // already recorded when they were taken
  // The search procedure's decisions are re-derived; a person's steps are
  // history and are kept.
  std::vector<nlohmann::json> decisions;
  for (const auto& d : restored.decisions) decisions.push_back(to_json(d));
  for (const auto& d : store.decisions())
    if (is_user_action(d)) decisions.push_back(d);
  if (auto st = store.replace_decisions(decisions); !st.ok()) return st;
  // A count this process wrote: an unreadable one counts from none.
  const auto resumes = std::strtol(store.get_meta("resumes").value_or("0").c_str(), nullptr, 10) + 1;
  store.put_meta("resumes", std::to_string(resumes));
  return r;
}

}  // namespace cerebro
