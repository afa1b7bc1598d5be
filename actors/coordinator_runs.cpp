#include "actors/coordinator_runs.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "runtime/base/file_io.hpp"
#include "runtime/base/log_lines.hpp"
#include "runtime/run/run_recovery.hpp"
#include "runtime/spec/spec.hpp"
#include "runtime/store/state_store.hpp"

namespace fs = std::filesystem;

namespace cerebro {

void start_run_thread(caf::local_actor* gateway, const RunOptions& options, const ClusterView& cluster) {
  auto reports_to = caf::actor_cast<coordinator_actor>(gateway);
  gateway->spawn<caf::detached>([options, cluster, reports_to](caf::blocking_actor* runner) {
    const auto& id = options.experiment_id;
    RunObserver observer{[&](const std::string& line) { runner->send(reports_to, run_line_atom::value, id, line); },
                         [&](const progress_update& p) { runner->send(reports_to, progress_atom::value, id, p); },
                         [&](run_follower_actor follower) {
                           runner->send(reports_to, run_started_atom::value, id, std::move(follower));
                         }};
    auto summary = run_experiment(runner->system(), options, cluster, observer);
    // The files are read here, in the runner's thread, not in the gateway.
    runner->send(reports_to, run_ended_atom::value, id, summary.ok(),
                 run_files_of(id, options.out_dir, summary.status()));
  });
}

std::vector<UnfinishedRun> find_unfinished_runs(const std::string& state_dir) {
  auto say = [](const std::string& line) { emit_log_line("coordinator: " + line); };
  std::vector<UnfinishedRun> runs;
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator(fs::path(state_dir) / "experiments", ec)) {
    if (!fs::is_directory(dir.path() / "state")) continue;
    auto store = StateStore::open((dir.path() / "state").string(), false);
    if (!store.ok()) {
      say(fmt::format("{}: cannot open its state ({}); not resumed", dir.path().string(), store.error()));
      continue;
    }
    if ((*store)->get_meta("finished") == std::optional<std::string>("true")) continue;
    auto spec = spec_of_run(**store, dir.path().string());
    UnfinishedRun run;
    run.id = (*store)->get_meta("experiment_id").value_or(dir.path().filename().string());
    run.facts.name = spec.ok() ? spec->name : run.id;
    run.facts.spec_text = (*store)->get_meta("spec").value_or("");
    if (spec.ok()) {
      run.facts.metric = to_string(spec->metric);
      run.facts.heartbeat_timeout_s = spec->cluster.heartbeat_timeout;
    }
    run.run_dir = dir.path().string();
    say(fmt::format("{}: unfinished; resumes when agents have joined", run.id));
    runs.push_back(std::move(run));
  }
  return runs;
}

run_files run_files_of(const std::string& experiment, const std::string& run_dir, const Status& outcome) {
  run_files files;
  files.experiment = experiment;
  files.error = outcome.message();
  files.error_code = outcome.code();
  if (!outcome.ok()) return files;
  std::vector<std::string> names{"summary.json", "metrics.csv", "best_model.pt", "spec.toml"};
  // The TensorBoard logs too (tensorboard/config-N/events...), as paths under the run directory.
  std::error_code ec;
  for (fs::recursive_directory_iterator it(fs::path(run_dir) / "tensorboard", ec), end; !ec && it != end;
       it.increment(ec))
    if (it->is_regular_file()) names.push_back(fs::relative(it->path(), run_dir).generic_string());
  for (const auto& name : names) {
    auto path = fs::path(run_dir) / name;
    if (!fs::exists(path)) continue;
    auto contents = read_whole_file(path.string());
    if (!contents.ok()) return run_files_of(experiment, run_dir, contents.status());
    files.names.push_back(name);
    files.contents.push_back(std::move(contents).value());
  }
  return files;
}

}  // namespace cerebro
