#include "runtime/run/run_finisher.hpp"

#include <chrono>
#include <filesystem>

#include "runtime/base/file_io.hpp"
#include "runtime/base/log_lines.hpp"
#include "runtime/run/objectives.hpp"
#include "runtime/store/run_summary.hpp"
#include "runtime/viz/tensorboard.hpp"
#include "runtime/viz/tensorboard_live.hpp"

namespace fs = std::filesystem;

namespace cerebro {

Result<nlohmann::json> finish_run(StateStore& store, const ExperimentControl& control, const ExperimentSpec& spec,
                                  const FinishedTraining& training, TrainedModels& models, const std::string& run_dir,
                                  const Say& say) {
  fs::path dir = run_dir;
  // A config still "running" in the control has trained its every epoch.
  for (auto record : store.configs()) {
    auto it = control.outcomes().find(record.id);
    if (it != control.outcomes().end()) {
      record.status = it->second.status == ConfigStatus::running ? ConfigStatus::completed : it->second.status;
      record.error = it->second.error;
    }
    store.put_config(record);
  }
  auto log = store.unit_log();
  auto ranked = rank_configs(store.configs(), log, spec.metric);
  nlohmann::json best = nullptr;
  if (!ranked.empty() && ranked.front().metric) {
    const auto& top = ranked.front();
    auto state = store.latest_state(top.id);
    if (!state.ok()) return state.status();
    auto test = models.test(top.params, *state);
    if (!test.ok()) return test.status();
    auto val = top.epochs.back();
    best = {{"id", top.id},
            {"params", top.params},
            {"val_loss", val.val_loss},
            {"test_loss", test->loss},
            {"model_file", "best_model.pt"}};
    // val_<name> and test_<name> of every metric (test_accuracy stays for classification).
    for (const auto& [name, value] : named_values(val)) best[name] = value;
    if (test->metrics.empty()) best["test_accuracy"] = test->accuracy;
    for (const auto& [name, value] : test->metrics) best["test_" + name] = value;
    if (auto pictures = models.examples(top.params, *state); pictures.ok()) {
      best["examples"] = *pictures;
      store.put_meta("examples", pictures->dump());  // for the API's experiment view and the dashboard
    }
    auto exported = models.export_model(top.params, *state, (dir / "best_model.pt").string());
    if (!exported.ok()) {
      best["model_file"] = nullptr;
      say("the best model could not be exported: " + exported.message());
    }
  }
  double unit_span_s = training.unit_span_s;
  if (store.get_meta("resumes")) {
    // Across restarts: dispatch to commit of every committed unit.
    unit_span_s = 0;
    for (const auto& e : log) unit_span_s += e.end_s - e.start_s;
  }
  RunFacts facts{spec.name,
                 spec.seed,
                 training.workers,
                 training.partitions,
                 spec.epochs,
                 to_string(spec.metric),
                 goal_of(spec.metric),
                 training.wall_s,
                 unit_span_s};
  auto summary = build_summary(facts, ranked, log, best);
  if (!training.replay_of.empty()) summary["replay_of"] = fs::absolute(training.replay_of).string();
  if (auto resumes = store.get_meta("resumes")) summary["resumes"] = std::stoi(*resumes);
  if (!spec.objectives.empty()) {
    auto values = objective_values(spec, store, ranked, log, models);
    if (!values.ok()) return values.status().with_context("several objectives");
    add_objectives(summary, spec, *values);
    // The final front for the API and the REPL (inference_ms is measured only now).
    store.put_meta("objective_values", objective_values_json(spec, *values).dump());
  }
  summary["units_rolled_back"] = store.rolled_back_units().size();
  if (auto st = write_file_atomically((dir / "summary.json").string(), summary.dump(2) + "\n"); !st.ok()) return st;
  if (auto st = write_file_atomically((dir / "metrics.csv").string(), metrics_csv(ranked)); !st.ok()) return st;
  // TensorBoard logs are for looking at, not for resuming: a failure to
  // write them is said, and the run still finishes.
  RunView view{spec.name, run_dir, to_string(spec.metric), ranked, log, summary, spec.metric.higher_is_better()};
  if (auto id = store.get_meta("experiment_id")) view.experiment = *id;
  double now_s = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  TensorBoardClock clock{now_s - log_span(log).second, host_name()};
  bool logged = false;
  if (training.tensorboard && !training.tensorboard->failed()) {
    auto completed = training.tensorboard->finish(view);
    logged = completed.ok();
    if (!logged)
      say("the live TensorBoard logs could not be completed (" + completed.error() + "); writing them again");
  }
  if (!logged) {
    if (auto written = write_tensorboard_logs(run_dir, view, clock); !written.ok())
      say("the TensorBoard logs could not be written: " + written.error());
  }
  store.put_meta("finished", "true");
  return summary;
}

}  // namespace cerebro
