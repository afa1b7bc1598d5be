// cerebro: the command line. Subcommands: run, prepare, show, bench, coordinator, agent, status, simulate, repl.
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "actors/experiment_runner.hpp"
#include "datasets/prepare.hpp"
#include "runtime/store/run_summary.hpp"
#include "runtime/search/spec_loader.hpp"
#include "runtime/spec/spec.hpp"
#include "runtime/store/state_store.hpp"
#include "tools/bench.hpp"
#include "tools/cluster_commands.hpp"
#include "tools/progress.hpp"
#include "tools/repl.hpp"
#include "tools/simulate_command.hpp"

namespace fs = std::filesystem;
using namespace cerebro;

namespace {

std::string timestamp() {
  auto now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

int fail(const std::string& message) {
  fmt::print(stderr, "error: {}\n", message);
  return 1;
}

// A crash names its signal and leaves a backtrace on stderr (so a failing
// agent in a test log or a user's terminal says where), then dies of the same
// signal. Only async-signal-safe calls.
void report_fatal_signal(int sig) {
  const char* name = strsignal(sig);
  (void)!write(STDERR_FILENO, "cerebro: fatal signal: ", 23);
  (void)!write(STDERR_FILENO, name, strlen(name));
  (void)!write(STDERR_FILENO, "\n", 1);
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_crash_reporter() {
  void* warm[1];
  backtrace(warm, 1);  // loads libgcc now: not safe inside the handler
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, report_fatal_signal);
}

// Ends a cluster client command: its results are written and closed, and
// tearing down an actor system that has talked to a remote node can wait
// long for the peer's proxies, so the process leaves without it.
[[noreturn]] void leave_now(int rc) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(rc);
}

void print_result(const nlohmann::json& summary, const std::string& dir) {
  fmt::print("\nrun directory: {}\n", dir);
  fmt::print("wall {:.1f} s, unit compute {:.1f} s, hop overhead {:.2f}%\n", summary["wall_s"].get<double>(),
             summary["unit_compute_s"].get<double>(), 100 * summary["hop_overhead_fraction"].get<double>());
  const auto& best = summary["best"];
  if (best.is_null()) {
    fmt::print("no config completed an epoch: there is no best config\n");
  } else {
    fmt::print("best: config {} val_accuracy {:.4f} test_accuracy {:.4f}\n", best["id"].get<int>(),
               best["val_accuracy"].get<double>(), best["test_accuracy"].get<double>());
  }
}

void print_units(const std::vector<UnitLogEntry>& log) {
  fmt::print("{:>5} {:>6} {:>4} {:>5} {:>6} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8}  {}\n", "seq", "config", "part",
             "epoch", "worker", "start_s", "end_s", "train_s", "valid_s", "restore", "save", "status");
  for (const auto& e : log)
    fmt::print("{:>5} {:>6} {:>4} {:>5} {:>6} {:>9.3f} {:>9.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f}  {}\n", e.seq,
               e.config, e.partition, e.epoch, e.worker, e.start_s, e.end_s, e.train_s, e.validate_s, e.restore_s,
               e.save_s, to_string(e.status));
}

int show(const std::string& dir, size_t top, bool units) {
  auto store = StateStore::open((fs::path(dir) / "state").string(), false);
  if (!store.ok()) return fail(store.error() + " (is this a run directory?)");
  if (units) {
    print_units((*store)->unit_log());
    return 0;
  }
  auto metric = (*store)->get_meta("metric").value_or("val_accuracy");
  auto ranked = rank_configs((*store)->configs(), (*store)->unit_log(), metric);
  fmt::print("{}", format_leaderboard(ranked, metric, top));
  std::ifstream in(fs::path(dir) / "summary.json");
  if (in) {
    auto summary = nlohmann::json::parse(in, nullptr, false);
    if (!summary.is_discarded() && summary["best"].is_object())
      fmt::print("best: config {} test_accuracy {:.4f}\n", summary["best"]["id"].get<int>(),
                 summary["best"]["test_accuracy"].get<double>());
  } else {
    fmt::print("(no summary.json: the run has not finished)\n");
  }
  return 0;
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
    fmt::print("\n{}", format_leaderboard(rank_configs((*store)->configs(), (*store)->unit_log(), to_string(options.spec.metric)),
                                          to_string(options.spec.metric), 20));
  }
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
  std::string spec_dir;
  {
    auto store = StateStore::open((fs::path(original) / "state").string(), false);
    if (!store.ok()) return fail(store.error());
    spec_dir = (*store)->get_meta("spec_dir").value_or("");
  }
  std::ifstream spec_in(fs::path(original) / "spec.toml");
  std::string text((std::istreambuf_iterator<char>(spec_in)), std::istreambuf_iterator<char>());
  auto spec = parse_spec_string(text, spec_dir, (fs::path(original) / "spec.toml").string());
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
  for (size_t i = 0; i < before["configs"].size(); ++i) {
    const auto& a = before["configs"][i];
    const auto& b = after["configs"][i];
    for (size_t e = 0; e < a["epochs"].size(); ++e) {
      for (const char* key : {"train_loss", "val_loss", "val_accuracy"}) {
        if (e >= b["epochs"].size() || a["epochs"][e][key] != b["epochs"][e][key]) {
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

}  // namespace

// --tls-cert/--tls-key/--tls-ca on every subcommand that talks to a cluster.
void add_tls_options(CLI::App* cmd, tls_options& tls) {
  cmd->add_option("--tls-cert", tls.certificate, "TLS: this node's certificate (PEM)");
  cmd->add_option("--tls-key", tls.key, "TLS: this node's private key (PEM)");
  cmd->add_option("--tls-ca", tls.ca_file, "TLS: the CA certificate every node's certificate is signed by (PEM)");
}

int main(int argc, char** argv) {
  install_crash_reporter();
  CLI::App app{"cerebro: deep-learning model selection with Model Hopper Parallelism"};
  app.require_subcommand(1);

  auto* run = app.add_subcommand("run", "Train every config of an experiment spec on an embedded cluster");
  std::string spec_path, out_dir, replay_dir, resume_dir;
  int workers = 0;
  run->add_option("spec", spec_path, "Experiment spec (TOML)");
  run->add_option("--workers", workers, "Workers (default: the spec's [cluster] workers, else one per core)")
      ->check(CLI::PositiveNumber);
  run->add_option("--out", out_dir, "Run directory (default: runs/<name>-<time>); must not exist or be empty");
  run->add_option("--replay", replay_dir,
                  "Re-execute a finished run's logged visit order and check its metrics are reproduced exactly");
  run->add_option("--resume", resume_dir,
                  "Continue an interrupted run in RUN_DIR: committed units are kept, the rest run")
      ->excludes("spec")
      ->excludes("--replay")
      ->excludes("--out");
  ClientOptions client;
  std::string cluster_address;
  run->add_option("--cluster", cluster_address,
                  "Run on a cluster: the coordinator's host:port (default: an embedded cluster in this process)");
  run->add_option("--token-file", client.token_file, "File holding the cluster's token (with --cluster)");
  add_tls_options(run, client.tls);

  auto* coordinator = app.add_subcommand("coordinator", "Run a cluster coordinator that agents join");
  CoordinatorOptions coordinator_options;
  coordinator->add_option("--listen", coordinator_options.listen, "host:port to listen on (port 0: any free port)")
      ->capture_default_str();
  coordinator->add_option("--state", coordinator_options.state_dir, "State directory (experiments, RocksDB)")
      ->required();
  coordinator->add_option("--token-file", coordinator_options.token_file,
                          "File holding the shared token agents and clients must present (chmod 600)")
      ->required();
  coordinator
      ->add_option("--heartbeat-timeout", coordinator_options.heartbeat_timeout_s,
                   "Seconds without a heartbeat before an agent is dropped (it rejoins when it answers)")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  coordinator
      ->add_option("--max-message-mb", coordinator_options.max_message_mb,
                   "Without TLS: the largest message (MiB) a peer may send; a larger one closes its connection")
      ->check(CLI::Range(1, 4095))
      ->capture_default_str();
  add_tls_options(coordinator, coordinator_options.tls);

  auto* agent = app.add_subcommand("agent", "Run a node agent that joins a coordinator and hosts workers");
  AgentOptions agent_options;
  agent->add_option("--join", agent_options.join, "The coordinator's host:port")->capture_default_str();
  agent->add_option("--token-file", agent_options.token_file, "File holding the cluster's token")->required();
  agent->add_option("--workers", agent_options.workers, "Workers on this node")->capture_default_str();
  agent->add_option("--threads-per-worker", agent_options.threads_per_worker, "LibTorch threads per worker")
      ->capture_default_str();
  agent->add_option("--data-dir", agent_options.data_dir, "Where this node caches its partitions")->required();
  agent->add_option("--name", agent_options.name, "This agent's name, unique in the cluster")->required();
  add_tls_options(agent, agent_options.tls);

  auto* attach = app.add_subcommand("attach", "Follow an experiment running on a cluster and receive its run files");
  ClientOptions attach_options;
  std::string attach_experiment, attach_out;
  attach->add_option("experiment", attach_experiment, "The experiment's id (see cerebro status)")->required();
  attach->add_option("--cluster", attach_options.cluster, "The coordinator's host:port")->capture_default_str();
  attach->add_option("--token-file", attach_options.token_file, "File holding the cluster's token")->required();
  attach->add_option("--out", attach_out, "Where to write the run files (default: runs/<experiment>)");
  add_tls_options(attach, attach_options.tls);

  auto* status = app.add_subcommand("status", "List a cluster's agents and experiments");
  ClientOptions status_options;
  status->add_option("--cluster", status_options.cluster, "The coordinator's host:port")->capture_default_str();
  status->add_option("--token-file", status_options.token_file, "File holding the cluster's token")->required();
  status->add_option("--timeout", status_options.connect_timeout_s, "Seconds to keep trying to connect")
      ->capture_default_str();
  add_tls_options(status, status_options.tls);

  auto* prepare = app.add_subcommand("prepare", "Prepare a spec's dataset into checksummed partition shards");
  std::string prepare_spec, prepare_out;
  int partitions = 0;
  prepare->add_option("spec", prepare_spec, "Experiment spec (TOML)")->required();
  prepare->add_option("--out", prepare_out, "Output directory (must not exist or be empty)")->required();
  prepare->add_option("--partitions", partitions, "Partitions (default: the spec's, else one per core)")
      ->check(CLI::PositiveNumber);

  auto* show_cmd = app.add_subcommand("show", "Print a run's leaderboard from its state store");
  std::string show_dir;
  size_t top = 20;
  show_cmd->add_option("run_dir", show_dir, "Run directory")->required();
  show_cmd->add_option("--top", top, "Rows to show");
  bool show_units = false;
  show_cmd->add_flag("--units", show_units, "Print the unit log instead: which config trained on which partition, "
                                            "where, when, and the time it spent on each step");

  auto* bench = app.add_subcommand("bench", "Measure the reference workload against the ideal of plain LibTorch");
  BenchOptions bench_options;
  bench->add_option("--out", bench_options.out_dir, "Run directory of the benchmark run (default: runs/bench-<time>)");
  bench->add_option("--data", bench_options.data_dir, "Fashion-MNIST directory")->capture_default_str();
  bench->add_option("--limit", bench_options.limit, "Use only the first N training examples (0: all)");
  bench->add_option("--epochs", bench_options.epochs, "Epochs")->capture_default_str();
  bench->add_option("--workers", bench_options.workers, "Workers")->capture_default_str();
  bench->add_option("--json", bench_options.json_path, "Also write the figures to this file");
  bench->add_flag("--cluster", bench_options.cluster,
                  "Also run the workload on a coordinator and agent processes on loopback and compare");

  auto simulate = add_simulate_command(app);

  auto* repl = app.add_subcommand("repl", "Steer experiments by hand: submit, watch, pause, stop, add, clone, export");
  ReplOptions repl_options;
  repl_options.state_dir = (fs::path("runs") / ("repl-" + timestamp())).string();
  repl->add_option("--cluster", repl_options.cluster,
                   "Attach to a coordinator at host:port (default: an embedded cluster in this process)");
  repl->add_option("--token-file", repl_options.token_file, "File holding the cluster's token (with --cluster)");
  repl->add_option("--state", repl_options.state_dir, "Embedded cluster: state directory (experiments, shard cache; default: runs/repl-<time>)");
  repl->add_option("--workers", repl_options.workers, "Embedded cluster: workers (default: one per core)")
      ->check(CLI::PositiveNumber);
  repl->add_option("--timeout", repl_options.connect_timeout_s, "Seconds to keep trying to connect")
      ->capture_default_str();
  add_tls_options(repl, repl_options.tls);

  CLI11_PARSE(app, argc, argv);

  try {
    if (coordinator->parsed()) return coordinator_main(coordinator_options);
    if (agent->parsed()) return agent_main(agent_options);
    if (status->parsed()) leave_now(status_main(status_options));
    if (attach->parsed())
      leave_now(attach_main(attach_options, attach_experiment,
                            attach_out.empty() ? (fs::path("runs") / attach_experiment).string() : attach_out));
    if (run->parsed()) {
      if (!replay_dir.empty()) return replay(replay_dir, out_dir);
      if (!resume_dir.empty()) {
        if (!cluster_address.empty()) return fail("--resume resumes an embedded run; a coordinator resumes its own");
        auto spec = spec_of_run(resume_dir);
        if (!spec.ok()) return fail(spec.error());
        RunOptions options;
        options.spec = std::move(spec).value();
        options.workers = workers;
        options.out_dir = resume_dir;
        options.resume = true;
        return run_and_report(options);
      }
      if (spec_path.empty()) return fail("run needs a spec file (or --replay RUN_DIR); see cerebro run --help");
      if (!cluster_address.empty()) {
        client.cluster = cluster_address;
        auto dir = out_dir.empty() ? (fs::path("runs") / (fs::path(spec_path).stem().string() + "-" + timestamp())).string()
                                   : out_dir;
        leave_now(run_on_cluster(client, spec_path, dir));
      }
      auto spec = parse_spec_file(spec_path);
      if (!spec.ok()) return fail(spec.error());
      RunOptions options;
      options.spec = std::move(spec).value();
      options.workers = workers;
      options.out_dir = out_dir.empty() ? (fs::path("runs") / (options.spec.name + "-" + timestamp())).string() : out_dir;
      return run_and_report(options);
    }
    if (prepare->parsed()) {
      auto spec = parse_spec_file(prepare_spec);
      if (!spec.ok()) return fail(spec.error());
      auto manifest = prepare_dataset(*spec, prepare_out, partitions);
      if (!manifest.ok()) return fail(manifest.error());
      fmt::print("prepared {} partitions ({} training examples) in {}\n", manifest->partitions.size(),
                 manifest->train_examples, prepare_out);
      return 0;
    }
    if (show_cmd->parsed()) return show(show_dir, top, show_units);
    if (simulate->parsed()) return run_simulate_command(*simulate);
    // Running experiments end with an embedded cluster; attached ones go on.
    if (repl->parsed()) repl_main(repl_options);
    if (bench->parsed()) {
      if (bench_options.out_dir.empty()) bench_options.out_dir = (fs::path("runs") / ("bench-" + timestamp())).string();
      return run_bench(bench_options);
    }
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  return 0;
}
