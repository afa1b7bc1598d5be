#include "tools/bench.hpp"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/experiment_runner.hpp"
#include "datasets/prepare.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/search_space.hpp"
#include "tools/progress.hpp"

namespace fs = std::filesystem;

namespace cerebro {

namespace {

std::string reference_spec(const BenchOptions& o) {
  return fmt::format(R"(
[experiment]
name = "bench"
epochs = {}
seed = 42
[data]
source = "idx"
path = "{}"
validation_fraction = 0.1
limit = {}
[cluster]
workers = {}
threads_per_worker = 1
[space]
model = ["mlp", "cnn"]
lr = [1e-3, 3e-4]
batch_size = [64, 256]
optimizer = ["adam"]
)",
                     o.epochs, o.data_dir, o.limit, o.workers);
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

}  // namespace

int run_bench(const BenchOptions& o) {
  auto spec = parse_spec_string(reference_spec(o), "", "bench spec");
  if (!spec.ok()) {
    fmt::print(stderr, "error: {}\n", spec.error());
    return 1;
  }
  RunOptions run;
  run.spec = *spec;
  run.out_dir = o.out_dir;
  run.workers = o.workers;
  cli::ProgressPrinter printer(spec->metric);
  auto summary = run_embedded(run, {[&](const std::string& l) { printer.line(l); },
                                      [&](const progress_update& p) { printer.update(p); }});
  printer.finish();
  if (!summary.ok()) {
    fmt::print(stderr, "error: {}\n", summary.error());
    return 1;
  }

  fmt::print(stderr, "measuring the ideal: each config alone in a plain LibTorch loop on one thread\n");
  auto data = datasets::load_prepared((fs::path(o.out_dir) / "data").string());
  if (!data.ok()) {
    fmt::print(stderr, "error: {}\n", data.error());
    return 1;
  }
  auto train = concatenate(*data);
  models::ShapeInfo shape{data->manifest.sample_shape, data->manifest.num_classes};
  models::configure_threads(1);
  double standalone_sum = 0;
  nlohmann::json standalone = nlohmann::json::array();
  auto configs = configs_for(*spec).take_or_throw();
  for (const auto& c : configs) {
    auto ref = models::reference_training(c.params, shape, train, *data->validation, o.epochs, spec->seed);
    if (!ref.ok()) {
      fmt::print(stderr, "error: {}\n", ref.error());
      return 1;
    }
    fmt::print(stderr, "  config {} ({}): {:.1f} s, val_accuracy {:.4f}\n", c.id, describe_params(c.params),
               ref->seconds, ref->final_val_accuracy);
    standalone_sum += ref->seconds;
    standalone.push_back({{"id", c.id}, {"params", c.params}, {"seconds", ref->seconds}});
  }
  double wall = (*summary)["wall_s"].get<double>();
  double ideal = standalone_sum / o.workers;
  nlohmann::json report{{"workload", "grid {mlp,cnn} x lr {1e-3,3e-4} x batch {64,256}, adam"},
                        {"epochs", o.epochs},
                        {"workers", o.workers},
                        {"limit", o.limit},
                        {"wall_s", wall},
                        {"ideal_s", ideal},
                        {"efficiency", ideal / wall},
                        {"hop_overhead_fraction", (*summary)["hop_overhead_fraction"]},
                        {"unit_compute_s", (*summary)["unit_compute_s"]},
                        {"best_test_accuracy", (*summary)["best"].is_null() ? nlohmann::json(nullptr)
                                                                            : (*summary)["best"]["test_accuracy"]},
                        {"standalone", standalone},
                        {"run_dir", o.out_dir}};
  auto text = report.dump(2) + "\n";
  std::ofstream(fs::path(o.out_dir) / "bench.json") << text;
  if (!o.json_path.empty()) std::ofstream(o.json_path) << text;
  fmt::print("{}", text);
  fmt::print("efficiency {:.3f} (ideal {:.1f} s / wall {:.1f} s), hop overhead {:.2f}%\n", ideal / wall, ideal, wall,
             100 * report["hop_overhead_fraction"].get<double>());
  return 0;
}

}  // namespace cerebro
