// `cerebro run`: trains every config of a spec on an embedded cluster, or with
// --cluster on a coordinator; --resume continues an interrupted embedded run,
// --replay re-executes a finished one and checks its metrics come out the same.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/embedded_cluster.hpp"
#include "actors/experiment_runner.hpp"
#include "runtime/base/file_io.hpp"
#include "runtime/run/objectives.hpp"
#include "runtime/run/run_recovery.hpp"
#include "runtime/spec/spec.hpp"
#include "runtime/store/run_summary.hpp"
#include "runtime/store/state_store.hpp"
#include "tools/cluster_client.hpp"
#include "tools/command_registry.hpp"
#include "tools/command_support.hpp"
#include "tools/progress.hpp"
#include "tools/shared_options.hpp"
#include "tools/status_format.hpp"
#include "tools/ui_server.hpp"

namespace fs = std::filesystem;

namespace cerebro::cli {

namespace {

struct RunCommandOptions {
  std::string spec_path, out_dir, replay_dir, resume_dir;
  int workers = 0;
  std::string cluster_address;
  ClientOptions client;
  std::string ui;             // --ui [HOST:]PORT: the dashboard of this run's embedded cluster
  bool keep_serving = false;  // --keep-serving: the dashboard and API stay after the run, until Ctrl-C
};

void print_result(const nlohmann::json& summary, const std::string& dir) {
  fmt::print("\nrun directory: {}\n", dir);
  fmt::print("wall {:.1f} s, unit compute {:.1f} s, hop overhead {:.2f}%\n", summary["wall_s"].get<double>(),
             summary["unit_compute_s"].get<double>(), 100 * summary["hop_overhead_fraction"].get<double>());
  const auto& best = summary["best"];
  if (best.is_null()) {
    fmt::print("no config completed an epoch: there is no best config\n");
  } else {
    fmt::print("{}\n", best_line(summary));
  }
}

int run_and_report(RunOptions options) {
  cli::ProgressPrinter printer(to_string(options.spec.metric));
  RunObserver observer{[&](const std::string& l) { printer.line(l); },
                       [&](const progress_update& p) { printer.update(p); }};
  auto summary = run_embedded(options, observer);
  printer.finish();
  if (!summary.ok()) return fail(summary.error());
  auto store = StateStore::open((fs::path(options.out_dir) / "state").string(), false);
  if (store.ok()) {
    fmt::print("\n{}", format_leaderboard(rank_configs((*store)->configs(), (*store)->unit_log(), options.spec.metric),
                                          to_string(options.spec.metric), 20));
  }
  if (auto front = format_pareto_front(*summary); !front.empty()) fmt::print("\n{}", front);
  print_result(*summary, options.out_dir);
  return 0;
}

// Re-executes a finished run's logged visit order and checks that every
// config's per-epoch metrics come out exactly the same.
int replay(const std::string& original, std::string out_dir) {
  nlohmann::json before;
  {
    std::ifstream in(fs::path(original) / "summary.json");
    if (!in) return fail(fmt::format("{}: no summary.json: only a finished run can be replayed", original));
    before = nlohmann::json::parse(in, nullptr, false);
    if (before.is_discarded()) return fail(fmt::format("{}/summary.json is not valid JSON", original));
  }
  auto spec = spec_of_run(original);
  if (!spec.ok()) return fail(spec.error());
  RunOptions options;
  options.spec = std::move(spec).value();
  options.out_dir = out_dir.empty() ? fs::path(original).string() + "-replay-" + timestamp() : out_dir;
  options.workers = before["workers"].get<int>();
  options.prepared_data_dir = (fs::path(original) / "data").string();
  options.replay_of = original;
  int rc = run_and_report(options);
  if (rc != 0) return rc;
  std::ifstream in(fs::path(options.out_dir) / "summary.json");
  auto after = nlohmann::json::parse(in);
  int differing = 0;
  if (after["configs"].size() != before["configs"].size())
    return fail(fmt::format("replay differs from {}: {} configs, the original had {}", original,
                            after["configs"].size(), before["configs"].size()));
  for (size_t i = 0; i < before["configs"].size(); ++i) {
    const auto& a = before["configs"][i];
    const auto& b = after["configs"][i];
    // A search that proposes as it goes (tpe) re-derived these: the same ids with the same params.
    if (a["id"] != b["id"] || a["params"] != b["params"]) {
      ++differing;
      fmt::print(stderr, "config {}: its params differ ({} in the replay, {} in the original)\n", a["id"].dump(),
                 b["params"].dump(), a["params"].dump());
      continue;
    }
    for (size_t e = 0; e < a["epochs"].size(); ++e) {
      // Every recorded value of the epoch (train_loss, val_loss, val_accuracy, val_r2 ...) but its time.
      nlohmann::json recorded = a["epochs"][e];
      recorded.erase("seconds");
      for (const auto& [key, value] : recorded.items()) {
        if (e >= b["epochs"].size() || value != b["epochs"][e][key]) {
          ++differing;
          fmt::print(stderr, "config {} epoch {}: {} differs\n", a["id"].get<int>(), e, key);
        }
      }
    }
  }
  if (differing) return fail(fmt::format("replay differs from {} in {} metrics", original, differing));
  fmt::print("replay reproduced the metrics of all {} configs exactly\n", before["configs"].size());
  return 0;
}

// --ui: the run goes through an embedded cluster's gateway (the one `cerebro
// repl` uses), so the HTTP API and the dashboard can watch and steer it. Its
// run directory is OUT/experiments/<id> (state, data); the run files are also
// written into OUT itself, as `run --cluster` writes them.
int run_with_ui(const RunCommandOptions& o, const ExperimentSpec& spec) {
  auto out_dir = o.out_dir.empty() ? (fs::path("runs") / (spec.name + "-" + timestamp())).string() : o.out_dir;
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !fs::is_empty(out_dir, ec))
    return fail(fmt::format("{}: the run directory already exists and is not empty", out_dir));
  cerebro_system_config config(system_role::embedded);
  caf::actor_system system(config);
  auto cluster = EmbeddedCluster::start(system, EmbeddedClusterOptions{out_dir, o.workers});
  if (!cluster.ok()) return fail(cluster.error());
  auto ui = start_embedded_ui(system, cluster->gateway(), cluster->token(), o.ui, out_dir);
  if (!ui) leave_now(1);
  Client client(system, cluster->gateway(), cluster->token());
  std::string experiment;
  auto result = follow(to_string(spec.metric), [&](const Client::Progress& progress) {
    return client.run(
        spec.source_text, spec.spec_dir, o.spec_path,
        [&](const std::string& id) {
          experiment = id;
          fmt::print(stderr, "submitted experiment {} (run directory {}/experiments/{})\n", id, out_dir, id);
        },
        progress);
  });
  int rc = save_run_files(result, experiment, out_dir);
  if (o.keep_serving) {
    // The finished run stays readable (its store, files, report and models) until the user stops it; Ctrl-C
    // (SIGINT) or SIGTERM ends the process as for any command.
    fmt::print(stderr, "the run has ended; its dashboard and API are still served at {} until Ctrl-C\n", ui->url());
    std::fflush(stderr);
    for (;;) ::pause();
  }
  ui->stop();
  leave_now(rc);  // the embedded cluster's actors end with the process
}

int run_command(RunCommandOptions& o) {
  if (o.keep_serving && o.ui.empty()) return fail("--keep-serving keeps --ui's dashboard: give --ui [HOST:]PORT");
  if (!o.ui.empty() && (!o.cluster_address.empty() || !o.replay_dir.empty() || !o.resume_dir.empty()))
    return fail("--ui serves a new embedded run; a coordinator serves its own dashboard (cerebro coordinator --http)");
  if (!o.replay_dir.empty()) return replay(o.replay_dir, o.out_dir);
  if (!o.resume_dir.empty()) {
    if (!o.cluster_address.empty()) return fail("--resume resumes an embedded run; a coordinator resumes its own");
    auto spec = spec_of_run(o.resume_dir);
    if (!spec.ok()) return fail(spec.error());
    RunOptions options;
    options.spec = std::move(spec).value();
    options.workers = o.workers;
    options.out_dir = o.resume_dir;
    options.resume = true;
    return run_and_report(options);
  }
  if (o.spec_path.empty()) return fail("run needs a spec file (or --replay RUN_DIR); see cerebro run --help");
  if (!o.cluster_address.empty()) {
    o.client.cluster = o.cluster_address;
    auto dir = o.out_dir.empty()
                   ? (fs::path("runs") / (fs::path(o.spec_path).stem().string() + "-" + timestamp())).string()
                   : o.out_dir;
    leave_now(run_on_cluster(o.client, o.spec_path, dir));
  }
  auto spec = parse_spec_file(o.spec_path);
  if (!spec.ok()) return fail(spec.error());
  if (!o.ui.empty()) return run_with_ui(o, *spec);
  RunOptions options;
  options.spec = std::move(spec).value();
  options.workers = o.workers;
  options.out_dir =
      o.out_dir.empty() ? (fs::path("runs") / (options.spec.name + "-" + timestamp())).string() : o.out_dir;
  return run_and_report(options);
}

CommandAction setup(CLI::App& run) {
  auto o = std::make_shared<RunCommandOptions>();
  run.add_option("spec", o->spec_path, "Experiment spec (TOML)");
  run.add_option("--workers", o->workers, "Workers (default: the spec's [cluster] workers, else one per core)")
      ->check(CLI::PositiveNumber);
  run.add_option("--out", o->out_dir, "Run directory (default: runs/<name>-<time>); must not exist or be empty");
  run.add_option("--replay", o->replay_dir,
                 "Re-execute a finished run's logged visit order and check its metrics are reproduced exactly");
  run.add_option("--resume", o->resume_dir,
                 "Continue an interrupted run in RUN_DIR: committed units are kept, the rest run")
      ->excludes("spec")
      ->excludes("--replay")
      ->excludes("--out");
  add_optional_cluster_options(
      run, o->cluster_address, o->client.token_file,
      "Run on a cluster: the coordinator's host:port (default: an embedded cluster in this process)");
  add_tls_options(run, o->client.tls);
  add_ui_option(run, o->ui);
  run.add_flag("--keep-serving", o->keep_serving,
               "With --ui: keep serving the dashboard and API after the run ends, until Ctrl-C (without it, run "
               "exits when the run is done)");
  return [o] { return run_command(*o); };
}

const CommandRegistrar registrar{{"run", "Train every config of an experiment spec on an embedded cluster", 10, setup}};

}  // namespace

}  // namespace cerebro::cli
