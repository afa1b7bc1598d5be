// `cerebro bench`: the reference workload (grid {mlp, cnn} x lr {1e-3, 3e-4} x
// batch {64, 256}, Adam, 2 epochs, Fashion-MNIST, 2 workers x 1 thread) on the
// embedded cluster, against the ideal measured in the same invocation: each
// config trained by a plain LibTorch loop on one thread over the same data
// (with the same per-epoch validation), summed, divided by the workers; and
// the same standalone loops run `workers` at a time (what this machine gives
// concurrent trainings). With --cluster: the same workload on a coordinator
// and agent processes against the embedded run, hop latency of a 10 MB state
// over loopback, and the bytes of model state moved per epoch.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/experiment_runner.hpp"
#include "datasets/prepare.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/search/search_space.hpp"
#include "runtime/spec/spec.hpp"
#include "tools/bench_modes.hpp"
#include "tools/command_registry.hpp"
#include "tools/command_support.hpp"
#include "tools/progress.hpp"

namespace fs = std::filesystem;

namespace cerebro {

namespace {

struct BenchOptions {
  std::string out_dir;
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  int64_t limit = 0;
  int epochs = 2;
  int workers = 2;
  std::string json_path;
  bool cluster = false;  // also run it on a coordinator + `workers` agent processes
  // modes instead of the reference workload (tools/bench_modes.hpp).
  bool small_units = false;
  bool parity = false;
  bool tokens = false;
  std::vector<std::string> phases_of;
  int runs = 3;
  int hop_samples = 200;
};

std::string reference_spec(const BenchOptions& o) {
  return bench::grid_bench_spec("bench", o.epochs, o.data_dir, o.limit, o.workers);
}

// All partitions in one dataset: the standalone loop's training set.
datasets::Dataset concatenate(const datasets::PreparedData& data) {
  datasets::Dataset all;
  all.sample_shape = data.manifest.sample_shape;
  for (const auto& p : data.partitions) {
    all.features.insert(all.features.end(), p->features.begin(), p->features.end());
    all.labels.insert(all.labels.end(), p->labels.begin(), p->labels.end());
  }
  return all;
}

// The standalone loops again, `workers` at a time, longest first: the
// wall time plain task parallelism gets from this machine.
double concurrent_standalone(const std::vector<ConfigParams>& configs, const std::vector<double>& seconds,
                             const models::ShapeInfo& shape, const datasets::Dataset& train,
                             const datasets::Dataset& validation, int epochs, uint64_t seed, int workers) {
  std::vector<size_t> order(configs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return seconds[a] > seconds[b]; });
  std::mutex mutex;
  size_t next = 0;
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&] {
      models::configure_threads(1);
      for (;;) {
        size_t i;
        {
          std::lock_guard<std::mutex> lock(mutex);
          if (next == order.size()) return;
          i = order[next++];
        }
        models::reference_training(configs[i].params, shape, train, validation, epochs, seed);
      }
    });
  for (auto& t : threads) t.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Starts a coordinator and `agents` agents (this binary, as child processes)
// on a free loopback port, runs the spec on them, and measures a 10 MB hop.
Result<nlohmann::json> cluster_figures(const BenchOptions& o, const std::string& spec_path) {
  auto cluster = bench::BenchCluster::start((fs::path(o.out_dir) / "cluster").string(), o.workers);
  if (!cluster.ok()) return cluster.status();
  auto summary = (*cluster)->run(spec_path, (fs::path(o.out_dir) / "cluster" / "run").string());
  if (!summary.ok()) return summary.status();
  // Hop latency: a 10 MB state to the coordinator process and its ack, over
  // loopback, the way a state travels between checkpoint store and worker.
  auto hop_ms = (*cluster)->hop_ms(20, 10 * 1000 * 1000);
  if (!hop_ms.ok()) return hop_ms.status();
  return nlohmann::json{{"summary", *summary},
                        {"hop_ms_p50", bench::percentile(*hop_ms, 0.5)},
                        {"hop_ms_p99", bench::percentile(*hop_ms, 0.99)}};
}

int run_bench(const BenchOptions& o) {
  auto spec = parse_spec_string(reference_spec(o), "", "bench spec");
  if (!spec.ok()) {
    fmt::print(stderr, "error: {}\n", spec.error());
    return 1;
  }
  RunOptions run;
  run.spec = *spec;
  run.out_dir = (fs::path(o.out_dir) / "embedded").string();
  run.workers = o.workers;
  cli::ProgressPrinter printer(to_string(spec->metric));
  auto summary = run_embedded(
      run, {[&](const std::string& l) { printer.line(l); }, [&](const progress_update& p) { printer.update(p); }});
  printer.finish();
  if (!summary.ok()) {
    fmt::print(stderr, "error: {}\n", summary.error());
    return 1;
  }

  fmt::print(stderr, "measuring the ideal: each config alone in a plain LibTorch loop on one thread\n");
  auto data = datasets::load_prepared((fs::path(run.out_dir) / "data").string());
  if (!data.ok()) {
    fmt::print(stderr, "error: {}\n", data.error());
    return 1;
  }
  auto train = concatenate(*data);
  models::ShapeInfo shape{data->manifest.sample_shape, data->manifest.num_classes};
  models::configure_threads(1);
  double standalone_sum = 0;
  nlohmann::json standalone = nlohmann::json::array();
  auto sampled = configs_for(*spec);
  if (!sampled.ok()) {
    fmt::print(stderr, "error: {}\n", sampled.error());
    return 1;
  }
  auto configs = std::move(sampled).value();
  std::vector<double> seconds;
  for (const auto& c : configs) {
    auto ref = models::reference_training(c.params, shape, train, *data->validation, o.epochs, spec->seed);
    if (!ref.ok()) {
      fmt::print(stderr, "error: {}\n", ref.error());
      return 1;
    }
    fmt::print(stderr, "  config {} ({}): {:.1f} s, val_accuracy {:.4f}\n", c.id, describe_params(c.params),
               ref->seconds, ref->final_val_accuracy);
    standalone_sum += ref->seconds;
    seconds.push_back(ref->seconds);
    standalone.push_back({{"id", c.id}, {"params", c.params}, {"seconds", ref->seconds}});
  }
  double wall = (*summary)["wall_s"].get<double>();
  double ideal = standalone_sum / o.workers;
  fmt::print(stderr, "measuring the same standalone loops {} at a time\n", o.workers);
  double concurrent =
      concurrent_standalone(configs, seconds, shape, train, *data->validation, o.epochs, spec->seed, o.workers);
  nlohmann::json report{{"workload", "grid {mlp,cnn} x lr {1e-3,3e-4} x batch {64,256}, adam"},
                        {"epochs", o.epochs},
                        {"workers", o.workers},
                        {"limit", o.limit},
                        {"wall_s", wall},
                        {"ideal_s", ideal},
                        {"efficiency", ideal / wall},
                        {"concurrent_standalone_s", concurrent},
                        {"efficiency_vs_concurrent_standalone", concurrent / wall},
                        {"hop_overhead_fraction", (*summary)["hop_overhead_fraction"]},
                        {"span_overhead_fraction", (*summary)["span_overhead_fraction"]},
                        {"unit_compute_s", (*summary)["unit_compute_s"]},
                        {"makespan_over_compute", (*summary)["makespan_over_compute"]},
                        {"tail_idle_worker_s", (*summary)["tail_idle_worker_s"]},
                        {"best_test_accuracy",
                         (*summary)["best"].is_null() ? nlohmann::json(nullptr) : (*summary)["best"]["test_accuracy"]},
                        {"standalone", standalone},
                        {"run_dir", o.out_dir}};
  if (o.cluster) {
    auto spec_path = (fs::path(o.out_dir) / "bench.toml").string();
    std::ofstream(spec_path) << reference_spec(o);
    fmt::print(stderr, "running the same workload on a coordinator and {} agent processes\n", o.workers);
    auto figures = cluster_figures(o, spec_path);
    if (!figures.ok()) {
      fmt::print(stderr, "error: {}\n", figures.error());
      return 1;
    }
    const auto& cs = (*figures)["summary"];
    double cluster_wall = cs["wall_s"].get<double>();
    // MOP's model-only cost per epoch (k configs x p partitions x |S|): each
    // unit moves one state; here each unit moves it out and back.
    int64_t moved = 0, units = 0;
    {
      auto per_epoch = cs["state_bytes_moved_per_epoch"].get<int64_t>();
      moved = per_epoch;
      units = cs["units"].get<int64_t>() / std::max(1, o.epochs);
    }
    double mean_state = units ? static_cast<double>(moved) / 2.0 / static_cast<double>(units) : 0;
    report["cluster"] = {
        {"wall_s", cluster_wall},
        {"embedded_wall_s", wall},
        {"ratio", wall / cluster_wall},
        {"hop_overhead_fraction", cs["hop_overhead_fraction"]},
        {"span_overhead_fraction", cs["span_overhead_fraction"]},
        {"makespan_over_compute", cs["makespan_over_compute"]},
        {"tail_idle_worker_s", cs["tail_idle_worker_s"]},
        {"hop_10MB_ms_p50", (*figures)["hop_ms_p50"]},
        {"hop_10MB_ms_p99", (*figures)["hop_ms_p99"]},
        {"state_bytes_moved_per_epoch", moved},
        {"mop_model_only_bytes_per_epoch", static_cast<int64_t>(mean_state * static_cast<double>(units))},
        {"mean_state_bytes", mean_state},
        {"best_test_accuracy", cs["best"].is_null() ? nlohmann::json(nullptr) : cs["best"]["test_accuracy"]}};
  }
  auto text = report.dump(2) + "\n";
  std::ofstream(fs::path(o.out_dir) / "bench.json") << text;
  if (!o.json_path.empty()) std::ofstream(o.json_path) << text;
  fmt::print("{}", text);
  fmt::print(
      "efficiency {:.3f} (ideal {:.1f} s / wall {:.1f} s), {:.3f} against the standalone loops run {} at a time "
      "({:.1f} s), hop overhead {:.2f}%\n",
      ideal / wall, ideal, wall, concurrent / wall, o.workers, concurrent,
      100 * report["hop_overhead_fraction"].get<double>());
  fmt::print("makespan_over_compute {:.3f}, tail {:.1f} idle worker-seconds\n",
             report["makespan_over_compute"].get<double>(), report["tail_idle_worker_s"].get<double>());
  if (o.cluster)
    fmt::print("cluster: wall {:.1f} s, embedded/cluster ratio {:.3f}, 10 MB hop p50 {:.1f} ms p99 {:.1f} ms\n",
               report["cluster"]["wall_s"].get<double>(), report["cluster"]["ratio"].get<double>(),
               report["cluster"]["hop_10MB_ms_p50"].get<double>(), report["cluster"]["hop_10MB_ms_p99"].get<double>());
  return 0;
}

cli::CommandAction setup(CLI::App& bench) {
  auto o = std::make_shared<BenchOptions>();
  bench.add_option("--out", o->out_dir, "Run directory of the benchmark run (default: runs/bench-<time>)");
  bench.add_option("--data", o->data_dir, "Fashion-MNIST directory")->capture_default_str();
  bench.add_option("--limit", o->limit, "Use only the first N training examples (0: all)");
  bench.add_option("--epochs", o->epochs, "Epochs")->capture_default_str();
  bench.add_option("--workers", o->workers, "Workers")->capture_default_str();
  bench.add_option("--json", o->json_path, "Also write the figures to this file");
  bench.add_flag("--cluster", o->cluster,
                 "Also run the workload on a coordinator and agent processes on loopback and compare");
  bench.add_flag("--small-units", o->small_units,
                 "Instead: the fixed cost per unit of small units (16 random small MLPs x 2 partitions x 3 epochs, "
                 "20,000 examples), --runs times (with --cluster also on agent processes)");
  bench.add_flag("--parity", o->parity,
                 "Instead: the same units on the embedded cluster and on 2 agent processes in --runs interleaved "
                 "pairs, cluster hop overhead, and --hop-samples 10 MB hops through the coordinator's guard");
  bench.add_flag("--tokens", o->tokens,
                 "Instead: a transformer unit's tokens per second against a plain LibTorch loop over the same model "
                 "and batches (the licence texts), in --runs interleaved pairs on one thread");
  bench.add_option("--runs", o->runs, "--small-units: runs; --parity and --tokens: pairs")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  bench.add_option("--hop-samples", o->hop_samples, "--parity: 10 MB hops measured")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  bench
      .add_option("--phases", o->phases_of,
                  "Instead: where the non-compute time of existing runs went (restore, save, state read and "
                  "messages, commit, idle between units), e.g. runs an older binary made")
      ->check(CLI::ExistingDirectory);
  return [o] {
    if (!o->phases_of.empty()) return bench::print_phases(o->phases_of);
    if (o->out_dir.empty()) o->out_dir = (fs::path("runs") / ("bench-" + cli::timestamp())).string();
    if (int{o->small_units} + int{o->parity} + int{o->tokens} > 1) {
      fmt::print(stderr, "error: --small-units, --parity and --tokens are separate benchmarks: give one\n");
      return 1;
    }
    if (o->small_units || o->parity || o->tokens) {
      fs::create_directories(o->out_dir);
      bench::ModeOptions m{o->out_dir, o->data_dir, o->runs, o->cluster, o->hop_samples, o->json_path};
      if (o->tokens) return bench::run_tokens(m);
      return o->small_units ? bench::run_small_units(m) : bench::run_parity(m);
    }
    return run_bench(*o);
  };
}

const cli::CommandRegistrar registrar{
    {"bench", "Measure the reference workload against the ideal of plain LibTorch", 80, setup}};

}  // namespace

}  // namespace cerebro
