#include "actors/run_setup.hpp"

#include <thread>

#include <fmt/format.h>

#include "runtime/base/file_io.hpp"
#include "datasets/dataset_source.hpp"
#include "datasets/idx.hpp"
#include "models/cost_probe.hpp"
#include "models/predict.hpp"
#include "runtime/run/run_recovery.hpp"
#include "runtime/store/run_summary.hpp"
#include "runtime/spec/steering.hpp"

namespace fs = std::filesystem;

namespace cerebro {

namespace {

Result<datasets::PrepareOptions> prepare_options(const ExperimentSpec& spec, int partitions) {
  datasets::PrepareOptions o;
  const auto& d = spec.data;
  o.source = d.source;
  if (datasets::parse_builtin_source(d.source) == datasets::BuiltinSource::idx) {
    if (!d.path.empty()) {
      auto files = datasets::find_idx_files(d.path);
      if (!files.ok()) return files.status().with_context("[data] path");
      o.train_images = files->train_images;
      o.train_labels = files->train_labels;
      o.test_images = files->test_images;
      o.test_labels = files->test_labels;
    } else {
      o.train_images = d.train_images;
      o.train_labels = d.train_labels;
      o.test_images = d.test_images;
      o.test_labels = d.test_labels;
    }
  } else {
    o.train_csv = d.train;
    o.test_csv = d.test;
    o.label_column = d.label_column;
    o.label_columns = d.label_columns;
  }
  o.task = spec.task;
  o.validation_fraction = d.validation_fraction;
  o.test_fraction = d.test_fraction;
  o.partitions = partitions;
  o.limit = d.limit;
  o.seed = spec.seed;
  auto mode = datasets::parse_normalization_mode(effective_normalization(d));
  if (!mode.ok()) return mode.status();
  o.normalization = *mode;
  return o;
}

models::ShapeInfo shape_of(const datasets::Manifest& m) {
  models::ShapeInfo shape{m.sample_shape, m.num_classes};
  shape.task = m.task;
  shape.target_stddev = m.target_stddev;
  return shape;
}

// The task's metric must be computable: top-5 needs more than 5 classes, and
// a training template's methods must keep their contract (checked on a pilot
// batch, so a bad template fails the run before anything is kept).
Status check_task(const ExperimentSpec& spec, const Setup& s) {
  if (spec.task != s.data.manifest.task)
    return Status::invalid_argument(fmt::format("the prepared data is for task {}, the spec's task is {}",
                                                datasets::to_string(s.data.manifest.task), datasets::to_string(spec.task)));
  if (spec.metric.quantity() == "top5_accuracy" && s.shape.num_classes <= 5)
    return Status::invalid_argument(fmt::format("[experiment] metric val_top5_accuracy needs more than 5 classes; the data has {}",
                                                s.shape.num_classes));
  for (const auto& c : s.configs) {
    auto ok = models::check_template(c.params, s.shape, *s.data.partitions.at(0), spec.metric.quantity(),
                                     spec.metric.builtin());
    if (!ok.ok()) return ok.with_context(fmt::format("[space] config {} ({})", c.id, describe_params(c.params)));
  }
  return Status::ok_status();
}

Result<Setup> set_up(const RunOptions& options, int workers, const fs::path& dir, const RunObserver& observer) {
  const auto& spec = options.spec;
  Setup s;
  s.workers = workers;
  s.partitions = spec.data.partitions > 0 ? spec.data.partitions : s.workers;
  auto configs = configs_for(spec);
  if (!configs.ok()) return configs.status();
  s.configs = std::move(configs).value();

  std::string data_dir = options.prepared_data_dir;
  if (data_dir.empty()) {
    data_dir = (dir / "data").string();
    auto manifest = prepare_dataset(spec, data_dir, s.partitions, observer.line);
    if (!manifest.ok()) return manifest.status();
  }
  auto data = datasets::load_prepared(data_dir);
  if (!data.ok()) return data.status();
  s.data_dir = data_dir;
  s.data = std::move(data).value();
  s.partitions = static_cast<int>(s.data.partitions.size());
  s.shape = shape_of(s.data.manifest);
  for (const auto& c : s.configs) {
    auto ok = models::check_params(c.params, s.shape);
    if (!ok.ok()) return ok.with_context(fmt::format("[space] config {} ({})", c.id, describe_params(c.params)));
  }
  if (auto ok = check_task(spec, s); !ok.ok()) return ok;
  return s;
}


}  // namespace

Result<datasets::Manifest> prepare_dataset(const ExperimentSpec& spec, const std::string& out_dir, int partitions,
                                           const std::function<void(const std::string&)>& line) {
  if (partitions <= 0) partitions = spec.data.partitions > 0 ? spec.data.partitions
                                    : spec.cluster.workers > 0 ? spec.cluster.workers : default_workers();
  auto options = prepare_options(spec, partitions);
  if (!options.ok()) return options.status();
  return datasets::prepare(*options, out_dir, line);
}

int default_workers() { return std::max(1u, std::thread::hardware_concurrency()); }

Result<Prepared> start_new(const RunOptions& options, const ClusterView& cluster, const fs::path& dir,
                           const RunObserver& observer, RunDirGuard& guard, const Say& say) {
  Prepared r;
  r.spec = options.spec;
  const auto& spec = r.spec;
  auto setup = set_up(options, cluster.total_workers(), dir, observer);
  if (!setup.ok()) return setup.status();
  r.setup = std::move(setup).value();
  auto& s = r.setup;

  auto opened = StateStore::open((dir / "state").string(), true);
  if (!opened.ok()) return opened.status();
  r.store = std::move(opened).value();
  if (auto st = write_file_atomically((dir / "spec.toml").string(), spec.source_text); !st.ok()) return st;
  r.store->put_meta("spec", spec.source_text);
  r.store->put_meta("spec_dir", spec.spec_dir);
  store_metric(*r.store, spec.metric);
  // What `predict` needs of this run's data, for exports (models/predict.hpp).
  const auto info = models::model_info(s.data.manifest);
  r.store->put_meta("model_info", info.dump());
  if (auto st = write_file_atomically((dir / models::kModelInfoFile).string(), info.dump(2) + "\n"); !st.ok()) return st;
  r.store->put_meta("experiment_id", options.experiment_id);
  r.store->set_keep_epoch_states(spec.search == SearchKind::pbt);
  auto control = make_run_control(spec, options.replay_of, s.configs, s.partitions);
  if (!control.ok()) return control.status();
  r.control = *control;

  // Initial states, one config at a time (initialisation draws from torch's
  // global generator): the pilot forward pass rejects configs that do not fit.
  std::vector<std::pair<ConfigId, nlohmann::json>> accepted;
  for (const auto& c : s.configs) {
    ConfigRecord record{c.id, c.params, ConfigStatus::running, ""};
    auto init = models::initial_state(c.params, s.shape, *s.data.partitions.at(0), unit_seed(spec.seed, {c.id, -1, -1}));
    if (init.ok()) {
      r.store->put_initial_state(c.id, *init);
      r.control->add_config(c.id, spec.epochs);
      r.params_json[c.id] = c.params.dump();
      accepted.emplace_back(c.id, c.params);
    } else {
      record.status = ConfigStatus::failed;
      record.error = init.error();
      r.control->reject_config(c.id, init.error());
      say(fmt::format("config {} ({}) failed its pilot check: {}", c.id, describe_params(c.params), init.error()));
    }
    r.store->put_config(record);
  }
  // Cost priors, so the policy starts the heavy configs' long chains first
  // (runtime/scheduling/cost_prior.hpp); kept for resuming and simulating.
  models::configure_threads(spec.cluster.threads_per_worker);
  models::TorchCostProbe probe(s.shape, *s.data.partitions.at(0));
  auto estimated = CostPriors::estimate(accepted, probe);
  for (const auto& problem : estimated.problems) say("warning: no cost prior for " + problem);
  estimated.priors.apply_to(*r.control);
  r.store->put_meta("cost_priors", estimated.priors.to_json().dump());
  guard.keep();  // from here on the run directory is a (resumable) record
  say(fmt::format("training {} configs x {} partitions x {} epochs on {} workers", r.params_json.size(),
                  s.partitions, spec.epochs, s.workers));
  return r;
}

// Reopens an unfinished run: its spec, prepared data and configs come from
// the run directory; recovery (runtime/run/run_recovery.hpp) rebuilds the
// schedule from the store.
Result<Prepared> reopen(const RunOptions& options, const ClusterView& cluster, const fs::path& dir, const Say& say,
                        std::shared_ptr<StateStore> open_store) {
  Prepared r;
  if (open_store) {
    r.store = std::move(open_store);
  } else {
    auto opened = StateStore::open((dir / "state").string(), false);
    if (!opened.ok()) return Status::error(opened.error() + " (is this a run directory?)");
    r.store = std::move(opened).value();
  }
  auto spec = resumable_spec(*r.store, dir.string());
  if (!spec.ok()) return spec.status();
  r.spec = std::move(spec).value();
  auto& s = r.setup;
  s.workers = cluster.total_workers();
  s.data_dir = (dir / "data").string();
  auto data = datasets::load_prepared(s.data_dir);
  if (!data.ok()) return data.status();
  s.data = std::move(data).value();
  s.partitions = static_cast<int>(s.data.partitions.size());
  s.shape = shape_of(s.data.manifest);
  auto recovered = recover_run(*r.store, r.spec, options.replay_of, s.partitions, dir.string(), say);
  if (!recovered.ok()) return recovered.status();
  s.configs = std::move(recovered->configs);
  r.control = recovered->control;
  r.params_json = std::move(recovered->params_json);
  say(fmt::format("resuming {}: {} of {} units done, {} configs to go, on {} workers", dir.string(),
                  recovered->units_done, r.control->units_total(), r.params_json.size(), s.workers));
  return r;
}

}  // namespace cerebro
