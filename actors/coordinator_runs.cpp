#include "actors/coordinator_runs.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "runtime/base/file_io.hpp"
#include "runtime/base/log_lines.hpp"
#include "runtime/run/run_options.hpp"
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

namespace {

// The run in `dir` (it has a state/ store), or nothing when its store cannot be opened (logged). Read
// only: a run another process still writes is read as it is now.
std::optional<StoredRun> stored_run(const fs::path& dir) {
  auto store = StateStore::open_read_only((dir / "state").string());
  if (!store.ok()) {
    emit_log_line(fmt::format("coordinator: {}: cannot open its state ({}); left out", dir.string(), store.error()));
    return std::nullopt;
  }
  auto spec = spec_of_run(**store, dir.string());
  StoredRun run;
  run.finished = (*store)->get_meta("finished") == std::optional<std::string>("true");
  run.units = static_cast<int64_t>((*store)->unit_log().size());
  run.id = (*store)->get_meta("experiment_id").value_or(dir.filename().string());
  run.facts.name = spec.ok() ? spec->name : run.id;
  run.facts.spec_text = (*store)->get_meta("spec").value_or("");
  if (spec.ok()) {
    run.facts.metric = to_string(spec->metric);
    run.facts.heartbeat_timeout_s = spec->cluster.heartbeat_timeout;
  }
  run.run_dir = dir.string();
  return run;
}

// A folder's name as an experiment id: letters, digits, "-", "_" and "." (what the API's paths take).
std::string id_of_folder(std::string name) {
  for (char& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '-';
  return name.empty() || name.front() == '.' ? "run" + name : name;
}

}  // namespace

std::vector<StoredRun> find_stored_runs(const std::string& state_dir) {
  std::vector<StoredRun> runs;
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator(fs::path(state_dir) / "experiments", ec)) {
    if (!fs::is_directory(dir.path() / "state")) continue;
    auto run = stored_run(dir.path());
    if (!run) continue;
    if (!run->finished)
      emit_log_line(fmt::format("coordinator: {}: unfinished; resumes when agents have joined", run->id));
    runs.push_back(std::move(*run));
  }
  return runs;
}

std::vector<StoredRun> find_runs_under(const std::string& dir, int depth) {
  std::vector<StoredRun> runs;
  std::vector<std::pair<fs::path, int>> todo{{fs::path(dir), 0}};
  std::set<std::string> ids;
  while (!todo.empty()) {
    auto [at, level] = todo.back();
    todo.pop_back();
    std::error_code ec;
    if (fs::is_directory(at / "state", ec)) {
      if (auto run = stored_run(at)) {
        // An embedded run's experiment has the one default id: its folder names it instead. Two runs of one
        // id (a replay beside its original, say) are told apart by a count.
        if (run->id == RunOptions{}.experiment_id) run->id = id_of_folder(at.filename().string());
        const auto base = run->id;
        for (int n = 2; !ids.insert(run->id).second; ++n) run->id = base + "-" + std::to_string(n);
        run->finished = true;  // read only: nothing here runs again
        runs.push_back(std::move(*run));
      }
      continue;
    }
    if (level >= depth) continue;
    std::vector<fs::path> children;
    for (const auto& entry : fs::directory_iterator(at, ec))
      if (entry.is_directory(ec) && !entry.is_symlink(ec)) children.push_back(entry.path());
    std::sort(children.rbegin(), children.rend());
    for (auto& child : children) todo.emplace_back(std::move(child), level + 1);
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
