#include "actors/experiment_runner.hpp"

#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "actors/actors.hpp"
#include "datasets/idx.hpp"
#include "datasets/prepare.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/replay_policy.hpp"
#include "runtime/run_summary.hpp"
#include "runtime/search_space.hpp"

namespace fs = std::filesystem;

namespace cerebro {

namespace {

class system_config : public caf::actor_system_config {
 public:
  explicit system_config(int workers) {
    register_message_types(*this);
    // Training runs in detached actors; the shared pool only routes messages.
    set("scheduler.max-threads", std::max(2, std::min(workers, 4)));
  }
};

Result<datasets::PrepareOptions> prepare_options(const ExperimentSpec& spec, int partitions) {
  datasets::PrepareOptions o;
  const auto& d = spec.data;
  o.source = d.source;
  if (d.source == "idx") {
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
  }
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

Status write_text(const fs::path& path, const std::string& text) {
  auto tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) return Status::error(fmt::format("{}: cannot write", tmp));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Status::error(fmt::format("{}: cannot rename into place: {}", path.string(), ec.message()));
  return Status::ok_status();
}

// The per-config visit order of a finished run, from its unit log.
Result<ReplayPolicy::VisitOrder> visit_order_of(const std::string& run_dir) {
  auto store = StateStore::open((fs::path(run_dir) / "state").string(), false);
  if (!store.ok()) return store.status();
  ReplayPolicy::VisitOrder order;
  for (const auto& e : (*store)->unit_log()) {
    auto& epochs = order[e.config];
    if (static_cast<int32_t>(epochs.size()) <= e.epoch) epochs.resize(e.epoch + 1);
    epochs[e.epoch].push_back(e.partition);
  }
  return order;
}

// Removes the run directory unless the run got far enough to keep it.
class RunDirGuard {
 public:
  explicit RunDirGuard(fs::path dir) : dir_(std::move(dir)) {}
  ~RunDirGuard() {
    if (!keep_) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }
  void keep() { keep_ = true; }

 private:
  fs::path dir_;
  bool keep_ = false;
};

struct Setup {
  std::vector<ConfigParams> configs;
  datasets::PreparedData data;
  models::ShapeInfo shape;
  int workers = 0;
  int partitions = 0;
};

Result<Setup> set_up(const RunOptions& options, const fs::path& dir, const RunObserver& observer) {
  const auto& spec = options.spec;
  Setup s;
  s.workers = options.workers > 0 ? options.workers : spec.cluster.workers > 0 ? spec.cluster.workers
                                                                                : default_workers();
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
  s.data = std::move(data).value();
  s.partitions = static_cast<int>(s.data.partitions.size());
  s.shape = models::ShapeInfo{s.data.manifest.sample_shape, s.data.manifest.num_classes};
  for (const auto& c : s.configs) {
    auto ok = models::check_params(c.params, s.shape);
    if (!ok.ok()) return ok.with_context(fmt::format("[space] config {} ({})", c.id, describe_params(c.params)));
  }
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

Result<nlohmann::json> run_experiment(const RunOptions& options, const RunObserver& observer) {
  const auto& spec = options.spec;
  auto say = [&](const std::string& line) {
    if (observer.line) observer.line(line);
  };
  fs::path dir = options.out_dir;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec))
    return Status::error(fmt::format("{}: the run directory already exists and is not empty", dir.string()));
  fs::create_directories(dir, ec);
  if (ec) return Status::error(fmt::format("{}: cannot create the run directory: {}", dir.string(), ec.message()));
  RunDirGuard guard(dir);

  auto setup = set_up(options, dir, observer);
  if (!setup.ok()) return setup.status();
  auto& s = *setup;
  models::configure_threads(spec.cluster.threads_per_worker);

  auto opened = StateStore::open((dir / "state").string(), true);
  if (!opened.ok()) return opened.status();
  std::shared_ptr<StateStore> store = std::move(opened).value();
  if (auto st = write_text(dir / "spec.toml", spec.source_text); !st.ok()) return st;
  store->put_meta("spec", spec.source_text);
  store->put_meta("spec_dir", spec.spec_dir);
  store->put_meta("metric", spec.metric);

  std::unique_ptr<SchedulingPolicy> policy;
  if (!options.replay_of.empty()) {
    auto order = visit_order_of(options.replay_of);
    if (!order.ok()) return order.status();
    policy = std::make_unique<ReplayPolicy>(std::move(order).value());
  } else {
    try {
      policy = make_policy(spec.cluster.scheduler, spec.seed);
    } catch (const Error& e) {
      return Status::error(std::string("[cluster] scheduler: ") + e.what());
    }
  }
  auto metric = spec.metric == "val_loss" ? ExperimentControl::Metric::val_loss
                                          : ExperimentControl::Metric::val_accuracy;
  auto control = std::make_shared<ExperimentControl>(s.partitions, spec.seed, metric, spec.cluster.max_unit_retries,
                                                     std::move(policy), std::make_unique<FixedEpochsProcedure>());

  // Initial states, one config at a time (initialisation draws from torch's
  // global generator): the pilot forward pass rejects configs that do not fit.
  std::map<ConfigId, std::string> params_json;
  for (const auto& c : s.configs) {
    ConfigRecord record{c.id, c.params, "running", ""};
    auto init = models::initial_state(c.params, s.shape, *s.data.partitions.at(0), unit_seed(spec.seed, {c.id, -1, -1}));
    if (init.ok()) {
      store->put_initial_state(c.id, *init);
      control->add_config(c.id, spec.epochs);
      params_json[c.id] = c.params.dump();
    } else {
      record.status = "failed";
      record.error = init.error();
      control->reject_config(c.id, init.error());
      say(fmt::format("config {} ({}) failed its pilot check: {}", c.id, describe_params(c.params), init.error()));
    }
    store->put_config(record);
  }
  guard.keep();  // from here on the run directory is a (resumable) record

  say(fmt::format("training {} configs x {} partitions x {} epochs on {} workers", params_json.size(), s.partitions,
                  spec.epochs, s.workers));
  experiment_done done;
  {
    system_config cfg(s.workers);
    caf::actor_system system(cfg);
    std::vector<caf::actor> partition_actors;
    std::map<PartitionId, caf::actor> partitions;
    for (int p = 0; p < s.partitions; ++p) partitions[p] = spawn_data_partition(system, p, s.data.partitions[p]);
    partitions[validation_partition] = spawn_data_partition(system, validation_partition, s.data.validation);
    std::vector<PartitionId> holds;
    for (int p = 0; p < s.partitions; ++p) holds.push_back(p);

    scheduler_config sc;
    sc.control = control;
    sc.params_json = params_json;
    sc.checkpoint = spawn_checkpoint(system, store);
    for (int w = 0; w < s.workers; ++w) {
      sc.workers.emplace_back(w, spawn_worker(system, worker_config{w, s.shape, partitions}));
      control->add_worker(w, holds);
    }
    caf::scoped_actor self(system);
    sc.listener = self;
    auto scheduler = spawn_scheduler(system, sc);
    self->send(scheduler, start_atom::value);
    bool running = true;
    self->receive_while(running)(
        [&](progress_atom, const progress_update& p) {
          if (observer.progress) observer.progress(p);
        },
        [&](done_atom, const experiment_done& d) {
          done = d;
          running = false;
        });
    for (auto& [w, worker] : sc.workers) self->send_exit(worker, caf::exit_reason::user_shutdown);
    for (auto& [p, actor] : partitions) self->send_exit(actor, caf::exit_reason::user_shutdown);
    self->send_exit(sc.checkpoint, caf::exit_reason::user_shutdown);
  }
  if (!done.error.empty()) return Status::error("the experiment stopped: " + done.error);

  // Final statuses, the leaderboard, the test score of the best config.
  for (auto record : store->configs()) {
    auto it = control->outcomes().find(record.id);
    if (it != control->outcomes().end()) {
      record.status = it->second.status == "running" ? "completed" : it->second.status;
      record.error = it->second.error;
    }
    store->put_config(record);
  }
  auto log = store->unit_log();
  auto ranked = rank_configs(store->configs(), log, spec.metric);
  nlohmann::json best = nullptr;
  if (!ranked.empty() && ranked.front().metric) {
    const auto& top = ranked.front();
    auto state = store->latest_state(top.id);
    if (!state.ok()) return state.status();
    auto test = models::evaluate_state(top.params, s.shape, *state, *s.data.test);
    if (!test.ok()) return test.status();
    auto val = top.epochs.back();
    best = {{"id", top.id},
            {"params", top.params},
            {"val_accuracy", val.val_accuracy},
            {"val_loss", val.val_loss},
            {"test_accuracy", test->accuracy},
            {"test_loss", test->loss},
            {"model_file", "best_model.pt"}};
    auto exported = models::export_model(top.params, s.shape, *state, (dir / "best_model.pt").string());
    if (!exported.ok()) {
      best["model_file"] = nullptr;
      say("the best model could not be exported: " + exported.message());
    }
  }
  RunFacts facts{spec.name, spec.seed, s.workers, s.partitions, spec.epochs, spec.metric, done.wall_s, done.unit_span_s};
  auto summary = build_summary(facts, ranked, log, best);
  if (!options.replay_of.empty()) summary["replay_of"] = fs::absolute(options.replay_of).string();
  if (auto st = write_text(dir / "summary.json", summary.dump(2) + "\n"); !st.ok()) return st;
  if (auto st = write_text(dir / "metrics.csv", metrics_csv(ranked)); !st.ok()) return st;
  store->put_meta("finished", "true");
  return summary;
}

}  // namespace cerebro
