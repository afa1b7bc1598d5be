#include "models/run_setup.hpp"

#include "models/gang_trainer.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "runtime/base/file_io.hpp"
#include "datasets/dataset_source.hpp"
#include "datasets/idx.hpp"
#include "datasets/prepared_cache.hpp"
#include "models/cost_probe.hpp"
#include "models/pipeline_runner.hpp"
#include "models/predict.hpp"
#include "runtime/run/new_config.hpp"
#include "runtime/run/objectives.hpp"
#include "runtime/run/run_recovery.hpp"
#include "runtime/store/pipeline_state.hpp"
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
  } else if (const auto builtin = datasets::parse_builtin_source(d.source);
             builtin == datasets::BuiltinSource::images || builtin == datasets::BuiltinSource::coco) {
    datasets::ImageOptions& images = builtin == datasets::BuiltinSource::coco ? o.coco.images : o.images;
    images.path = builtin == datasets::BuiltinSource::coco ? std::string() : d.path;
    if (d.image_size.size() == 2) {
      images.height = d.image_size[0];
      images.width = d.image_size[1];
    }
    images.channels = d.color == ImageColor::rgb ? 3 : 1;
    images.resize = d.resize;
    images.skip_bad = d.skip_bad;
    o.coco.path = d.path;
    o.coco.annotations = d.annotations;
    o.coco.image_root = d.image_root;
  } else if (builtin == datasets::BuiltinSource::text) {
    o.text.path = d.path;
    o.text.window = d.window;
    o.text.tokenizer = d.tokenizer;
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
  o.normalization = effective_normalization(d);
  o.tokenizer.kind = d.tokenizer;
  o.tokenizer.min_count = d.min_count;
  o.tokenizer.max_vocab = d.max_vocab;
  return o;
}

models::ShapeInfo shape_of(const datasets::Manifest& m, const ExperimentSpec& spec) {
  models::ShapeInfo shape{m.sample_shape, m.num_classes};
  shape.task = m.task;
  shape.target_stddev = m.target_stddev;
  shape.beam = spec.beam;
  return shape;
}

// The task's metric must be computable: top-5 needs more than 5 classes, and
// a training template's methods must keep their contract (checked on a pilot
// batch, so a bad template fails the run before anything is kept).
Status check_task(const ExperimentSpec& spec, const Setup& s) {
  if (spec.task != s.data.manifest.task)
    return Status::invalid_argument(fmt::format("the prepared data is for task {}, the spec's task is {}",
                                                datasets::to_string(s.data.manifest.task),
                                                datasets::to_string(spec.task)));
  if (spec.metric.kind() == Quantity::top5_accuracy && s.shape.num_classes <= 5)
    return Status::invalid_argument(fmt::format(
        "[experiment] metric val_top5_accuracy needs more than 5 classes; the data has {}", s.shape.num_classes));
  for (const auto& c : s.configs) {
    auto ok = models::check_template(c.params, s.shape, *s.data.partitions.at(0), spec.metric.quantity(),
                                     spec.metric.builtin());
    if (!ok.ok()) return ok.with_context(fmt::format("[space] config {} ({})", c.id, describe_params(c.params)));
  }
  return Status::ok_status();
}

// The coordinator's side of a run needs partition 0 (pilot forward passes)
// and the validation and test sets; the agents hold the partitions. Dropping
// the other mappings keeps their pages out of this process.
void keep_only_the_pilot_partition(datasets::PreparedData& data) {
  for (size_t i = 1; i < data.partitions.size(); ++i) data.partitions[i].reset();
}

// The spec's [data] augment, for samples of `shape` (images: channels, height, width).
Result<datasets::Augmentation> augmentation_for(const DataSpec& d, const std::vector<int64_t>& shape) {
  datasets::Augmentation a;
  auto has = [&](Augment kind) { return std::find(d.augment.begin(), d.augment.end(), kind) != d.augment.end(); };
  a.random_crop = has(Augment::random_crop);
  a.hflip = has(Augment::hflip);
  a.crop_padding = d.crop_padding;
  if (a.any() && shape.size() != 3)
    return Status::invalid_argument(
        fmt::format("[data] augment needs image samples (channels, height, width), "
                    "but the data's samples have shape [{}]",
                    fmt::join(shape, ",")));
  return a;
}

// A resumed run whose data/ links into the cache finds its entry again: when
// the entry was pruned or damaged meanwhile it is prepared again, and it must
// come out under the same key (the same source files and parameters), or the
// run would go on with other data.
Status relink_cached_data(const StateStore& store, const ExperimentSpec& spec, const fs::path& dir, const Say& say) {
  const fs::path link = dir / "data";
  std::error_code ec;
  if (!fs::is_symlink(link, ec)) return Status::ok_status();  // its own copy, or a run from before the cache
  if (datasets::verify_prepared(link.string()).ok()) return Status::ok_status();
  auto partitions = store.get_meta("data_partitions");
  const fs::path target = fs::read_symlink(link, ec);
  if (!partitions || !spec.data.cache) return Status::ok_status();  // loading reports what is wrong
  say(fmt::format("the run's prepared data ({}) is missing or damaged; preparing it again", target.string()));
  auto cached = prepare_into_cache(spec, std::stoi(*partitions), say);
  if (!cached.ok()) return cached.status();
  if (fs::path(cached->dir).filename() != target.filename())
    return Status::failed_precondition(
        fmt::format("{}: the source data or its preparation changed since the run started (cache entry {}, was {}): "
                    "the run cannot resume on other data",
                    dir.string(), cached->name, target.filename().string()));
  fs::remove(link, ec);
  fs::create_directory_symlink(cached->dir, link, ec);
  if (ec) return Status::io_error(fmt::format("{}: cannot link the prepared data: {}", link.string(), ec.message()));
  return Status::ok_status();
}

Result<Setup> set_up(const RunOptions& options, int workers, const fs::path& dir, const Say& say) {
  const auto& spec = options.spec;
  Setup s;
  s.workers = workers;
  s.partitions = spec.data.partitions > 0 ? spec.data.partitions : s.workers;
  auto configs = configs_for(spec);
  if (!configs.ok()) return configs.status();
  s.configs = std::move(configs).value();

  // The run's data/ is the prepared dataset: a link to the shared cache's
  // entry (prepared there unless it is ready), or, uncached, its own copy.
  const std::string data_dir = (dir / "data").string();
  std::error_code ec;
  if (!options.prepared_data_dir.empty()) {  // a replay: the original run's data
    fs::create_directory_symlink(fs::canonical(options.prepared_data_dir, ec), data_dir, ec);
    if (ec) return Status::io_error(fmt::format("{}: cannot link the prepared data: {}", data_dir, ec.message()));
  } else if (auto options_for_data = prepare_options(spec, s.partitions);
             options_for_data.ok() && spec.data.cache && datasets::is_cacheable(*options_for_data)) {
    auto cached = prepare_into_cache(spec, s.partitions, say);
    if (!cached.ok()) return cached.status();
    fs::create_directory_symlink(cached->dir, data_dir, ec);
    if (ec) return Status::io_error(fmt::format("{}: cannot link the prepared data: {}", data_dir, ec.message()));
  } else {
    auto manifest = prepare_dataset(spec, data_dir, s.partitions, say);
    if (!manifest.ok()) return manifest.status();
  }
  // Mapped: this process reads the pilot, validation and test examples
  // through the page cache; the partitions are the agents' to hold.
  auto data = datasets::load_prepared(data_dir, datasets::ShardStorage::mapped);
  if (!data.ok()) return data.status();
  s.data_dir = data_dir;
  s.data = std::move(data).value();
  keep_only_the_pilot_partition(s.data);
  s.partitions = static_cast<int>(s.data.partitions.size());
  s.shape = shape_of(s.data.manifest, spec);
  auto augmentation = augmentation_for(spec.data, s.shape.sample_shape);
  if (!augmentation.ok()) return augmentation.status();
  s.augmentation = *augmentation;
  for (const auto& c : s.configs) {
    auto ok = models::check_params(c.params, s.shape);
    if (!ok.ok()) return ok.with_context(fmt::format("[space] config {} ({})", c.id, describe_params(c.params)));
    // Pipeline stages: a config that asks for them, or whose
    // training state exceeds [cluster] model_memory_mb, trains over k stages
    // on k workers at once (the scheduler's pipeline attempts). Errors name
    // the key: not splittable, more stages than workers or children, does
    // not fit even split. ([cluster] memory_mb is the partitions' budget.)
    auto plan = models::plan_config(c.params, s.shape, PipelineLimits{s.workers, spec.cluster.model_memory_mb << 20});
    if (!plan.ok()) {
      // A model that cannot be built for this data is no plan's fault: its
      // config is rejected below (create_config) and the others train.
      if (plan.code() == StatusCode::failed_precondition) continue;
      return plan.status().with_context(fmt::format("[space] config {} ({})", c.id, describe_params(c.params)));
    }
    if (plan->stages >= 2) {
      s.pipeline_stages[c.id] = plan->stages;
      say(fmt::format("config {} trains as a pipeline over {} stages: {}", c.id, plan->stages, plan->reason));
    }
  }
  if (auto ok = check_task(spec, s); !ok.ok()) return ok;
  return s;
}

// The initial state of config `id` that trains over `stages` stages: the
// warm-start checkpoint when asked for and one matches, else a fresh
// initialisation (with its pilot check).
Result<std::string> initial_state_of(const Prepared& r, ConfigId id, const nlohmann::json& params, int32_t stages) {
  if (stages >= 2)
    // Its stages' states framed as one (runtime/store/pipeline_state.hpp);
    // warm starts hold whole-model states, so a pipeline config starts fresh.
    return models::initial_pipeline_state(params, r.setup.shape, stages, unit_seed(r.spec.seed, {id, -1, -1}));
  if (r.spec.from_checkpoint) {
    if (const WarmConfig* w = find_warm_config(r.warm, params)) {
      auto earlier = StateStore::open((fs::path(w->run_dir) / "state").string(), false);
      if (!earlier.ok()) return earlier.status().with_context("[experiment] from_checkpoint: " + w->run_dir);
      auto state = (*earlier)->latest_state(w->id);
      if (!state.ok())
        return state.status().with_context(
            fmt::format("[experiment] from_checkpoint: {} config {}", w->run_dir, w->id));
      return state;
    }
  }
  return models::initial_state(params, r.setup.shape, *r.setup.data.partitions.at(0),
                               unit_seed(r.spec.seed, {id, -1, -1}));
}

// The trainable parameters of a config's model, built on the run's data shape.
ParametersOf parameters_of(const models::ShapeInfo& shape) {
  return [shape](const nlohmann::json& params) -> Result<double> {
    auto count = models::parameter_count(params, shape);
    if (!count.ok()) return count.status();
    return static_cast<double>(*count);
  };
}

// How config `id` trains: the run's own configs as set_up planned them (and,
// resumed, as the meta recorded them); a config created while the run trains
// is planned the same way now. A model that cannot be built for the data is
// no plan's fault: 1, and its pilot check says what is wrong.
Result<int32_t> stages_of(const Prepared& r, ConfigId id, const nlohmann::json& params) {
  if (auto split = r.setup.pipeline_stages.find(id); split != r.setup.pipeline_stages.end()) return split->second;
  auto stages = models::planned_stages(params, r.setup.shape, pipeline_limits_of(r));
  if (stages.ok()) return static_cast<int32_t>(*stages);
  if (stages.code() == StatusCode::failed_precondition) return 1;
  return stages.status();
}

}  // namespace

PipelineLimits pipeline_limits_of(const Prepared& r) {
  const int live = r.live_workers ? r.live_workers->load() : 0;
  return PipelineLimits{live > 0 ? live : r.setup.workers, r.spec.cluster.model_memory_mb << 20};
}

std::optional<int64_t> parameters_to_keep(bool count, const nlohmann::json& params, const models::ShapeInfo& shape) {
  if (!count) return std::nullopt;
  auto counted = models::parameter_count(params, shape);
  if (!counted.ok()) return std::nullopt;
  return *counted;
}

Result<int32_t> create_config(const Prepared& r, ConfigId id, const nlohmann::json& params) {
  auto stages = stages_of(r, id, params);
  Result<std::string> init =
      stages.ok() ? initial_state_of(r, id, params, *stages) : Result<std::string>(stages.status());
  if (!init.ok()) {
    // Kept as failed, with why: the leaderboard and a resumed run show it.
    if (auto st = r.store->put_config({id, params, ConfigStatus::failed, init.error()}); !st.ok()) return st;
    return init.status();
  }
  NewConfig config{id,
                   params,
                   *stages,
                   std::move(init).value(),
                   parameters_to_keep(has_objective(r.spec, BuiltinObjective::parameters), params, r.setup.shape),
                   r.setup.pipeline_stages.count(id) > 0};
  if (auto st = store_new_config(*r.store, config); !st.ok()) return st;
  return *stages;
}

namespace {

// The ETL's options for `partitions` (<= 0: the spec's [data] partitions,
// else its [cluster] workers, else one per core).
Result<datasets::PrepareOptions> options_for_preparing(const ExperimentSpec& spec, int partitions) {
  if (partitions <= 0)
    partitions = spec.data.partitions > 0   ? spec.data.partitions
                 : spec.cluster.workers > 0 ? spec.cluster.workers
                                            : default_workers();
  return prepare_options(spec, partitions);
}

}  // namespace

Result<datasets::Manifest> prepare_dataset(const ExperimentSpec& spec, const std::string& out_dir, int partitions,
                                           const std::function<void(const std::string&)>& line) {
  auto options = options_for_preparing(spec, partitions);
  if (!options.ok()) return options.status();
  return datasets::prepare(*options, out_dir, line);
}

Result<datasets::CachedData> prepare_into_cache(const ExperimentSpec& spec, int partitions,
                                                const std::function<void(const std::string&)>& line) {
  auto options = options_for_preparing(spec, partitions);
  if (!options.ok()) return options.status();
  datasets::PreparedCache cache(datasets::default_cache_dir());
  return cache.find_or_prepare(*options, line);
}

int default_workers() { return std::max(1u, std::thread::hardware_concurrency()); }

// Auto forms a gang only once the allreduce has a measured cost.
// Two threads here over loopback give a first one for the first config's
// gradients (a fraction of a second, only when there are workers to form a
// gang); the run's own gangs replace it with what they measure.
static void measure_allreduce_for_auto(Prepared& r, const Say& say) {
  const auto& s = r.setup;
  if (r.control->parallelism() != Parallelism::automatic || s.configs.empty() || s.workers < 2) return;
  auto allreduce = models::measure_allreduce_local(s.configs.front().params, s.shape, 2, 20);
  if (!allreduce.ok()) {
    say("parallelism auto: cannot measure the allreduce, so no gangs: " + allreduce.error());
    return;
  }
  r.control->observe_allreduce(2, *allreduce);
  say(fmt::format("parallelism auto: an allreduce of config {}'s gradients takes {:.2f} ms (2 ranks, loopback)",
                  s.configs.front().id, *allreduce * 1e3));
}

Result<Prepared> start_new(const RunOptions& options, int workers, const fs::path& dir, RunDirGuard& guard,
                           const Say& say) {
  Prepared r;
  r.spec = options.spec;
  const auto& spec = r.spec;
  // Before any data is prepared: a bad warm_start is an input error. A
  // replay is warm-started with what the original kept.
  if (!options.replay_of.empty() && !spec.warm_start.empty()) {
    auto original = StateStore::open((fs::path(options.replay_of) / "state").string(), false);
    if (!original.ok()) return original.status();
    if (auto text = (*original)->get_meta("warm_start")) {
      auto stored = warm_configs_from_json(nlohmann::json::parse(*text, nullptr, false));
      if (!stored.ok()) return stored.status().with_context(options.replay_of);
      r.warm = std::move(stored).value();
    }
  } else if (!spec.warm_start.empty()) {
    auto warm = load_warm_start(spec);
    if (!warm.ok()) return warm.status();
    r.warm = std::move(warm).value();
  }
  auto setup = set_up(options, workers, dir, say);
  if (!setup.ok()) return setup.status();
  r.setup = std::move(setup).value();
  auto& s = r.setup;

  auto opened = StateStore::open((dir / "state").string(), true);
  if (!opened.ok()) return opened.status();
  r.store = std::move(opened).value();
  if (auto st = write_file_atomically((dir / "spec.toml").string(), spec.source_text); !st.ok()) return st;
  r.store->put_meta("spec", spec.source_text);
  r.store->put_meta("spec_dir", spec.spec_dir);
  if (!spec.search_dirs.empty()) r.store->put_meta("spec_search_dirs", nlohmann::json(spec.search_dirs).dump());
  // The registered dataset it named, as it read it: a resume reads the same data even after the
  // dataset is removed or registered again (docs/SPEC.md "Registered datasets").
  if (!spec.datasets.empty()) r.store->put_meta("spec_datasets", spec.datasets.dump());
  store_metric(*r.store, spec.metric);
  // Several objectives: what the live Pareto front needs (runtime/run/objectives.hpp).
  if (!spec.objectives.empty()) r.store->put_meta("objectives", objectives_json(spec).dump());
  // What `predict` needs of this run's data, for exports (models/predict.hpp).
  const auto info = models::model_info(s.data.manifest);
  r.store->put_meta("model_info", info.dump());
  if (auto st = write_file_atomically((dir / models::kModelInfoFile).string(), info.dump(2) + "\n"); !st.ok())
    return st;
  r.store->put_meta("experiment_id", options.experiment_id);
  r.store->put_meta("data_partitions", std::to_string(s.partitions));
  r.store->set_keep_epoch_states(spec.search == SearchKind::pbt);
  if (!spec.warm_start.empty()) {
    r.store->put_meta("warm_start", to_json(r.warm).dump());
    if (spec.search != SearchKind::tpe) {
      for (const auto& [id, w] : seed_configs(s.configs, r.warm))
        say(fmt::format("config {} is config {} of {} (warm start, {} {})", id, w.id, w.run_dir, to_string(spec.metric),
                        spec.metric.higher_is_better() ? w.score : -w.score));
    } else {
      say(fmt::format("tpe starts with {} finished configs of {} earlier run(s)", r.warm.size(),
                      spec.warm_start.size()));
    }
  }
  auto control = make_run_control(spec, options.replay_of, s.configs, s.partitions, r.warm, parameters_of(s.shape));
  if (!control.ok()) return control.status();
  r.control = *control;
  if (!s.pipeline_stages.empty()) {
    nlohmann::json stages = nlohmann::json::object();
    for (const auto& [id, k] : s.pipeline_stages) stages[std::to_string(id)] = k;
    r.store->put_meta("pipeline_stages", stages.dump());
  }
  measure_allreduce_for_auto(r, say);

  // Initial states, one config at a time (initialisation draws from torch's
  // global generator): the pilot forward pass rejects configs that do not fit.
  // tpe has none yet: the scheduler creates its configs as they are proposed
  // (they get no cost priors; the policy learns their costs as they train).
  std::vector<std::pair<ConfigId, nlohmann::json>> accepted;
  for (const auto& c : s.configs) {
    auto made = create_config(r, c.id, c.params);
    if (made.ok()) {
      r.control->add_config(c.id, spec.epochs);
      if (*made >= 2) {
        if (auto set = r.control->set_pipeline_stages(c.id, *made); !set.ok()) return set;
      }
      r.params_json[c.id] = c.params.dump();
      accepted.emplace_back(c.id, c.params);
    } else {
      r.control->reject_config(c.id, made.error());
      say(fmt::format("config {} ({}) failed its pilot check: {}", c.id, describe_params(c.params), made.error()));
    }
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
  if (spec.search == SearchKind::tpe) {
    say(fmt::format("tpe: {} configs, proposed as workers free, x {} partitions x {} epochs on {} workers",
                    spec.samples, s.partitions, spec.epochs, s.workers));
  } else {
    say(fmt::format("training {} configs x {} partitions x {} epochs on {} workers", r.params_json.size(), s.partitions,
                    spec.epochs, s.workers));
  }
  return r;
}

// Reopens an unfinished run: its spec, prepared data and configs come from
// the run directory; recovery (runtime/run/run_recovery.hpp) rebuilds the
// schedule from the store.
Result<Prepared> reopen(const RunOptions& options, int workers, const fs::path& dir, const Say& say,
                        std::shared_ptr<StateStore> open_store) {
  Prepared r;
  if (open_store) {
    r.store = std::move(open_store);
  } else {
    auto opened = StateStore::open((dir / "state").string(), false);
    if (!opened.ok()) return Status::of(opened.code(), opened.error() + " (is this a run directory?)");
    r.store = std::move(opened).value();
  }
  auto spec = resumable_spec(*r.store, dir.string());
  if (!spec.ok()) return spec.status();
  r.spec = std::move(spec).value();
  auto& s = r.setup;
  s.workers = workers;
  s.data_dir = (dir / "data").string();
  if (auto relinked = relink_cached_data(*r.store, r.spec, dir, say); !relinked.ok()) return relinked;
  auto data = datasets::load_prepared(s.data_dir, datasets::ShardStorage::mapped);
  if (!data.ok()) return data.status();
  s.data = std::move(data).value();
  s.partitions = static_cast<int>(s.data.partitions.size());
  keep_only_the_pilot_partition(s.data);
  s.shape = shape_of(s.data.manifest, r.spec);
  auto augmentation = augmentation_for(r.spec.data, s.shape.sample_shape);
  if (!augmentation.ok()) return augmentation.status();
  s.augmentation = *augmentation;
  if (auto text = r.store->get_meta("warm_start")) {
    auto stored = warm_configs_from_json(nlohmann::json::parse(*text, nullptr, false));
    if (!stored.ok()) return stored.status().with_context(dir.string());
    r.warm = std::move(stored).value();
  }
  auto recovered =
      recover_run(*r.store, r.spec, options.replay_of, s.partitions, dir.string(), say, parameters_of(s.shape));
  if (!recovered.ok()) return recovered.status();
  s.configs = std::move(recovered->configs);
  r.control = recovered->control;
  r.params_json = std::move(recovered->params_json);
  // Pipeline configs keep the split their states have (planned at the start,
  // or when a config was created while the run trained: tpe, steering).
  auto stages = stored_pipeline_stages(*r.store);
  if (!stages.ok()) return stages.status();
  for (const auto& [config, k] : *stages) {
    s.pipeline_stages[config] = k;
    if (!r.params_json.count(config)) continue;
    // Only a config no longer in the schedule (failed at its start) is skipped.
    if (auto set = r.control->set_pipeline_stages(config, k); !set.ok() && set.code() != StatusCode::not_found)
      return set;
  }
  measure_allreduce_for_auto(r, say);
  say(fmt::format("resuming {}: {} of {} units done, {} configs to go, on {} workers", dir.string(),
                  recovered->units_done, r.control->units_total(), r.params_json.size(), s.workers));
  return r;
}

}  // namespace cerebro
