#include "actors/experiment_runner.hpp"

#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "actors/actors.hpp"
#include "actors/experiment_steering.hpp"
#include "datasets/idx.hpp"
#include "datasets/prepare.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/replay_policy.hpp"
#include "runtime/search/factory.hpp"
#include "runtime/search/replay.hpp"
#include "runtime/run_summary.hpp"
#include "runtime/cluster_validation.hpp"
#include "runtime/search_space.hpp"
#include "runtime/steering.hpp"

namespace fs = std::filesystem;

namespace cerebro {

namespace {


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
  std::string data_dir;  // the prepared partitions (this run's, or reused)
  datasets::PreparedData data;
  models::ShapeInfo shape;
  int workers = 0;
  int partitions = 0;
};

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
  s.shape = models::ShapeInfo{s.data.manifest.sample_shape, s.data.manifest.num_classes};
  for (const auto& c : s.configs) {
    auto ok = models::check_params(c.params, s.shape);
    if (!ok.ok()) return ok.with_context(fmt::format("[space] config {} ({})", c.id, describe_params(c.params)));
  }
  return s;
}


// Places an experiment's shards on agents: asks each agent to hold a shard
// (from its cache, a shared filesystem, or fetched from `source` in chunks)
// and remembers who holds what, for the scheduler's availability map.
class ShardPlacer {
 public:
  ShardPlacer(caf::scoped_actor& self, std::string experiment, const datasets::Manifest& manifest,
              std::string data_dir, int replication)
      : self_(self),
        experiment_(std::move(experiment)),
        manifest_(manifest),
        data_dir_(std::move(data_dir)),
        replication_(replication) {
    std::vector<std::string> files;
    for (const auto& p : manifest.partitions) files.push_back(p.file);
    files.push_back(manifest.validation.file);
    source_ = spawn_shard_server(self->system(), experiment_, data_dir_, files);
  }
  ~ShardPlacer() { self_->send_exit(source_, caf::exit_reason::user_shutdown); }

  // The initial placement: partition p on agents p, p+1, ... (replication of
  // them, round robin); the validation set on every agent.
  Result<std::vector<std::vector<PartitionId>>> place_all(const ClusterView& cluster) {
    auto agents = cluster.agents.size();
    std::vector<std::vector<PartitionId>> holds(agents);
    int copies = std::min<int>(replication_, static_cast<int>(agents));
    for (size_t p = 0; p < manifest_.partitions.size(); ++p)
      for (int r = 0; r < copies; ++r) holds[(p + static_cast<size_t>(r)) % agents].push_back(static_cast<PartitionId>(p));
    for (size_t a = 0; a < agents; ++a) {
      auto placed = place(cluster.agents[a], holds[a]);
      if (!placed.ok()) return placed;
    }
    return holds;
  }

  // A node that joins mid-run: it gets an even share of replicas, taking the
  // partitions with the fewest holders first.
  Result<std::vector<PartitionId>> place_joining(const ClusterView::Agent& agent, size_t agents_now) {
    std::vector<std::pair<int, PartitionId>> by_holders;
    for (size_t p = 0; p < manifest_.partitions.size(); ++p)
      by_holders.emplace_back(holders_[static_cast<PartitionId>(p)], static_cast<PartitionId>(p));
    std::sort(by_holders.begin(), by_holders.end());
    auto total = manifest_.partitions.size() * static_cast<size_t>(std::max(1, replication_));
    auto share = std::max<size_t>(1, (total + agents_now - 1) / agents_now);
    std::vector<PartitionId> chosen;
    for (size_t i = 0; i < by_holders.size() && i < share; ++i) chosen.push_back(by_holders[i].second);
    std::sort(chosen.begin(), chosen.end());
    auto placed = place(agent, chosen);
    if (!placed.ok()) return placed;
    return chosen;
  }

 private:
  Status place(const ClusterView::Agent& agent, const std::vector<PartitionId>& partitions) {
    std::vector<shard_placement> todo;
    for (auto p : partitions) todo.push_back(placement(p, manifest_.partitions.at(static_cast<size_t>(p))));
    todo.push_back(placement(validation_partition, manifest_.validation));
    Status failure;
    for (const auto& p : todo) {
      self_->request(agent.agent, caf::infinite, place_atom::value, p)
          .receive([&](bool) { if (p.partition >= 0) ++holders_[p.partition]; },
                   [&](const caf::error& e) {
                     failure = Status::error(
                         fmt::format("placing {} on {}: {}", p.file, agent.name, self_->system().render(e)));
                   });
      if (!failure.ok()) return failure;
    }
    return Status::ok_status();
  }
  shard_placement placement(PartitionId id, const datasets::ShardInfo& shard) const {
    return shard_placement{experiment_, id, shard.file, shard.bytes, shard.checksum,
                           (fs::path(data_dir_) / shard.file).string(), source_};
  }

  caf::scoped_actor& self_;
  std::string experiment_;
  const datasets::Manifest& manifest_;
  std::string data_dir_;
  int replication_;
  caf::actor source_;
  std::map<PartitionId, int> holders_;
};

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

Result<nlohmann::json> run_experiment(caf::actor_system& system, const RunOptions& options,
                                      const ClusterView& cluster, const RunObserver& observer) {
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

  if (auto v = validate_name("experiment id", options.experiment_id); !v.ok()) return v;
  if (cluster.agents.empty()) return Status::error("the cluster has no agents to run on");
  auto setup = set_up(options, cluster.total_workers(), dir, observer);
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
  std::unique_ptr<SearchProcedure> search;
  if (!options.replay_of.empty()) {
    // The original run's decisions, re-applied in its visit order.
    auto original = StateStore::open((fs::path(options.replay_of) / "state").string(), false);
    if (!original.ok()) return original.status();
    std::vector<SearchDecision> recorded;
    for (const auto& d : (*original)->decisions()) {
      // Steps taken by hand (the REPL) are not the search procedure's to re-make.
      if (is_user_action(d))
        return Status::error(fmt::format("{} was steered by hand ({} in its decision records): a replay re-makes "
                                         "only the search procedure's decisions, so it cannot reproduce this run",
                                         options.replay_of, d.value("action", std::string("an action"))));
      recorded.push_back(search_decision_from_json(d));
    }
    search = std::make_unique<ReplayDecisions>(recorded);
  } else {
    auto made = make_search_procedure(spec, s.configs);
    if (!made.ok()) return made.status();
    search = std::move(made).value();
  }
  store->set_keep_epoch_states(spec.search == "pbt");
  auto control = std::make_shared<ExperimentControl>(s.partitions, spec.seed, metric, spec.cluster.max_unit_retries,
                                                     std::move(policy), std::move(search));

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
    caf::scoped_actor self(system);
    int agents = static_cast<int>(cluster.agents.size());
    int replication = spec.cluster.replication > 0 ? spec.cluster.replication : std::min(2, agents);
    ShardPlacer placer(self, options.experiment_id, s.data.manifest, s.data_dir, replication);
    auto shards = placer.place_all(cluster);
    if (!shards.ok()) return shards.status();
    if (agents > 1)
      say(fmt::format("placed {} partitions on {} agents with replication {}", s.partitions, agents,
                      std::min(replication, agents)));
    auto live_agents = cluster.agents;
    scheduler_config sc;
    sc.control = control;
    sc.experiment = options.experiment_id;
    sc.shape = s.shape;
    sc.params_json = params_json;
    sc.checkpoint = spawn_checkpoint(system, store);
    WorkerId next_worker = 0;
    for (size_t a = 0; a < cluster.agents.size(); ++a) {
      for (const auto& worker : cluster.agents[a].workers) {
        sc.workers.emplace_back(next_worker, worker);
        control->add_worker(next_worker, (*shards)[a]);
        ++next_worker;
      }
    }
    sc.listener = self;
    auto scheduler = spawn_scheduler(system, sc);
    ConfigId next_config = 0;
    for (const auto& c : s.configs) next_config = std::max(next_config, c.id + 1);
    ExperimentSteering steering(SteeringContext{store, scheduler, s.shape, s.data.partitions.at(0), s.data.validation,
                                                spec.epochs, spec.seed, spec.search == "grid" || spec.search == "random",
                                                dir.string(), next_config});
    self->send(scheduler, start_atom::value);
    if (observer.started) observer.started(caf::actor_cast<caf::actor>(self));
    bool running = true;
    self->receive_while(running)(
        [&](progress_atom, const progress_update& p) {
          if (observer.progress) observer.progress(p);
        },
        [&](join_atom, const std::string& name, const caf::actor& agent, const std::vector<caf::actor>& workers) {
          // Elastic join: the new node gets replicas, then its workers take units.
          ClusterView::Agent joining{name, agent, workers};
          live_agents.push_back(joining);
          auto held = placer.place_joining(joining, live_agents.size());
          if (!held.ok()) {
            say(fmt::format("agent {} joined but could not take partitions: {}", name, held.error()));
            return;
          }
          say(fmt::format("agent {} joined mid-run: holds partitions {}", name, fmt::join(*held, ", ")));
          for (const auto& worker : workers) self->send(scheduler, add_worker_atom::value, next_worker++, worker, *held);
        },
        [&](control_atom, const control_request& r) {
          // Steering by hand (the REPL, through the gateway): see experiment_steering.hpp.
          auto promise = self->make_response_promise<control_reply>();
          auto reply = steering.handle(self.ptr(), r);
          if (reply.ok()) {
            reply->experiment = r.experiment;
            promise.deliver(std::move(reply).value());
          }
          else {
            promise.deliver(caf::make_error(caf::sec::runtime_error, reply.error()));
          }
        },
        [&](done_atom, const experiment_done& d) {
          done = d;
          running = false;
        });
    for (const auto& agent : live_agents) self->send(agent.agent, release_atom::value, options.experiment_id);
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

Result<nlohmann::json> run_embedded(const RunOptions& options, const RunObserver& observer) {
  int workers = options.workers > 0               ? options.workers
                : options.spec.cluster.workers > 0 ? options.spec.cluster.workers
                                                   : default_workers();
  cerebro_system_config config(system_role::embedded);
  config.set("scheduler.max-threads", std::max(2, std::min(workers, 4)));
  caf::actor_system system(config);
  // One agent in this process, on the run directory's own files: the same
  // placement path as a cluster, with the transfer skipped (shared filesystem).
  auto local = spawn_agent(system, agent_config{"local", (fs::path(options.out_dir) / "agent").string(), workers, true});
  ClusterView cluster;
  cluster.agents.push_back({"local", local.agent, local.workers});
  auto result = run_experiment(system, options, cluster, observer);
  caf::anon_send_exit(local.agent, caf::exit_reason::user_shutdown);
  for (auto& w : local.workers) caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  return result;
}

}  // namespace cerebro
