#include "actors/experiment_runner.hpp"

#include <filesystem>
#include <set>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "actors/actors.hpp"
#include "actors/experiment_steering.hpp"
#include "actors/shard_placer.hpp"
#include "datasets/idx.hpp"
#include "datasets/prepare.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/scheduling/replay_policy.hpp"
#include "runtime/search/factory.hpp"
#include "runtime/search/replay.hpp"
#include "runtime/store/run_summary.hpp"
#include "runtime/net/cluster_validation.hpp"
#include "runtime/search/search_registry.hpp"
#include "runtime/search/search_space.hpp"
#include "runtime/search/spec_loader.hpp"
#include "runtime/spec/steering.hpp"

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

namespace {

// The agents of a running experiment and the scheduler's ids of their
// workers (ids are never reused, so a late message names one worker).
struct LiveCluster {
  explicit LiveCluster(const std::vector<ClusterView::Agent>& initial) {
    for (const auto& a : initial) agents[a.name] = a;
  }
  WorkerId add_worker(const std::string& agent) {
    agent_of[next_worker] = agent;
    return next_worker++;
  }
  std::vector<WorkerId> workers_of(const std::string& agent) const {
    std::vector<WorkerId> out;
    for (const auto& [id, name] : agent_of)
      if (name == agent) out.push_back(id);
    return out;
  }
  void forget(const std::string& agent) {
    for (auto it = agent_of.begin(); it != agent_of.end();) it = it->second == agent ? agent_of.erase(it) : std::next(it);
  }
  std::map<std::string, ClusterView::Agent> agents;
  std::map<WorkerId, std::string> agent_of;
  WorkerId next_worker = 0;
};

// Everything training needs once the run's store is open: for a new run after
// setup and the initial states, for a resumed one after recovery and restore.
struct Prepared {
  ExperimentSpec spec;
  Setup setup;
  std::shared_ptr<StateStore> store;
  std::shared_ptr<ExperimentControl> control;
  std::map<ConfigId, std::string> params_json;
};

using Say = std::function<void(const std::string&)>;

Result<std::shared_ptr<ExperimentControl>> make_control(const ExperimentSpec& spec, const RunOptions& options,
                                                        const Setup& s) {
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
  const Metric metric = spec.metric;
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
  return std::make_shared<ExperimentControl>(s.partitions, spec.seed, metric, spec.cluster.max_unit_retries,
                                             std::move(policy), std::move(search));
}

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
  if (auto st = write_text(dir / "spec.toml", spec.source_text); !st.ok()) return st;
  r.store->put_meta("spec", spec.source_text);
  r.store->put_meta("spec_dir", spec.spec_dir);
  r.store->put_meta("metric", to_string(spec.metric));
  r.store->put_meta("experiment_id", options.experiment_id);
  r.store->set_keep_epoch_states(spec.search == SearchKind::pbt);
  auto control = make_control(spec, options, s);
  if (!control.ok()) return control.status();
  r.control = *control;

  // Initial states, one config at a time (initialisation draws from torch's
  // global generator): the pilot forward pass rejects configs that do not fit.
  for (const auto& c : s.configs) {
    ConfigRecord record{c.id, c.params, ConfigStatus::running, ""};
    auto init = models::initial_state(c.params, s.shape, *s.data.partitions.at(0), unit_seed(spec.seed, {c.id, -1, -1}));
    if (init.ok()) {
      r.store->put_initial_state(c.id, *init);
      r.control->add_config(c.id, spec.epochs);
      r.params_json[c.id] = c.params.dump();
    } else {
      record.status = ConfigStatus::failed;
      record.error = init.error();
      r.control->reject_config(c.id, init.error());
      say(fmt::format("config {} ({}) failed its pilot check: {}", c.id, describe_params(c.params), init.error()));
    }
    r.store->put_config(record);
  }
  guard.keep();  // from here on the run directory is a (resumable) record
  say(fmt::format("training {} configs x {} partitions x {} epochs on {} workers", r.params_json.size(),
                  s.partitions, spec.epochs, s.workers));
  return r;
}

// Reopens an unfinished run: its spec, prepared data and configs come from
// the run directory; each config's latest state is checked (a damaged one
// falls back to the newest intact state and the units after it run again);
// the unit log is replayed into the scheduler's book, so no committed unit
// runs again and every decision is re-derived.
Result<Prepared> reopen(const RunOptions& options, const ClusterView& cluster, const fs::path& dir, const Say& say,
                        std::shared_ptr<StateStore> open_store = nullptr) {
  Prepared r;
  if (open_store) {
    r.store = std::move(open_store);
  } else {
    auto opened = StateStore::open((dir / "state").string(), false);
    if (!opened.ok()) return Status::error(opened.error() + " (is this a run directory?)");
    r.store = std::move(opened).value();
  }
  if (r.store->get_meta("finished") == std::optional<std::string>("true"))
    return Status::error(fmt::format("{}: the run has finished; nothing to resume (see cerebro show)", dir.string()));
  auto spec = spec_of_run(*r.store, dir.string());
  if (!spec.ok()) return spec.status();
  r.spec = std::move(spec).value();
  auto& s = r.setup;
  s.workers = cluster.total_workers();
  s.data_dir = (dir / "data").string();
  auto data = datasets::load_prepared(s.data_dir);
  if (!data.ok()) return data.status();
  s.data = std::move(data).value();
  s.partitions = static_cast<int>(s.data.partitions.size());
  s.shape = models::ShapeInfo{s.data.manifest.sample_shape, s.data.manifest.num_classes};
  auto records = r.store->configs();
  for (const auto& record : records) s.configs.push_back(ConfigParams{record.id, record.params});
  r.store->set_keep_epoch_states(r.spec.search == SearchKind::pbt);
  auto control = make_control(r.spec, options, s);
  if (!control.ok()) return control.status();
  r.control = *control;

  std::set<ConfigId> live;
  for (const auto& record : records) {
    if (record.status == ConfigStatus::failed) {
      r.control->reject_config(record.id, record.error);
      continue;
    }
    auto recovered = r.store->recover_latest_state(record.id);
    if (!recovered.ok()) {
      say(fmt::format("warning: config {} cannot resume: {}", record.id, recovered.error()));
      r.control->reject_config(record.id, recovered.error());
      continue;
    }
    if (recovered->fell_back) {
      std::vector<std::string> units;
      for (const auto& e : recovered->rolled_back)
        units.push_back(fmt::format("seq {} ({})", e.seq, to_string(Unit{e.config, e.partition, e.epoch})));
      say(fmt::format("warning: config {}: {}; falling back to {}; {} unit(s) run again: {}", record.id,
                      recovered->problem,
                      recovered->intact_seq ? fmt::format("its state after seq {}", recovered->intact_seq)
                                            : std::string("its initial state"),
                      units.size(), fmt::join(units, ", ")));
    }
    r.control->add_config(record.id, r.spec.epochs);
    r.params_json[record.id] = record.params.dump();
    live.insert(record.id);
  }
  std::vector<UnitLogEntry> log;
  for (const auto& e : r.store->unit_log())
    if (live.count(e.config)) log.push_back(e);
  ExperimentControl::Restored restored;
  try {
    restored = r.control->restore(log);
  } catch (const Error& e) {
    return Status::error(fmt::format("{}: {}", dir.string(), e.what()));
  }
  // Configs a person stopped (the REPL) stay stopped; their committed units
  // are kept like everyone's.
  for (const auto& record : records)
    if (record.status == ConfigStatus::stopped && live.count(record.id)) r.control->stop_config(record.id);
  r.control->take_user_actions();  // already recorded when they were taken
  // The search procedure's decisions are re-derived; a person's steps are
  // history and are kept.
  std::vector<nlohmann::json> decisions;
  for (const auto& d : restored.decisions) decisions.push_back(to_json(d));
  for (const auto& d : r.store->decisions())
    if (is_user_action(d)) decisions.push_back(d);
  if (auto st = r.store->replace_decisions(decisions); !st.ok()) return st;
  auto resumes = std::stoi(r.store->get_meta("resumes").value_or("0")) + 1;
  r.store->put_meta("resumes", std::to_string(resumes));
  say(fmt::format("resuming {}: {} of {} units done, {} configs to go, on {} workers", dir.string(), restored.units,
                  r.control->units_total(), live.size(), s.workers));
  return r;
}

// Trains until every config is done: places the shards, starts the
// scheduler and follows it. Blocks the calling thread.
Result<experiment_done> train(caf::actor_system& system, const RunOptions& options, const ClusterView& cluster,
                              Prepared& r, const RunObserver& observer, const Say& say) {
  const auto& s = r.setup;
  caf::scoped_actor self(system);
  int agents = static_cast<int>(cluster.agents.size());
  int replication = r.spec.cluster.replication > 0 ? r.spec.cluster.replication : std::min(2, agents);
  ShardPlacer placer(self, options.experiment_id, s.data.manifest, s.data_dir, replication);
  auto shards = placer.place_all(cluster);
  if (!shards.ok()) return shards.status();
  if (agents > 1)
    say(fmt::format("placed {} partitions on {} agents with replication {}", s.partitions, agents,
                    std::min(replication, agents)));
  LiveCluster live(cluster.agents);
  scheduler_config sc;
  sc.control = r.control;
  sc.experiment = options.experiment_id;
  sc.shape = s.shape;
  sc.params_json = r.params_json;
  sc.checkpoint = spawn_checkpoint(system, r.store);
  for (size_t a = 0; a < cluster.agents.size(); ++a) {
    for (const auto& worker : cluster.agents[a].workers) {
      auto id = live.add_worker(cluster.agents[a].name);
      sc.workers.emplace_back(id, worker);
      r.control->add_worker(id, (*shards)[a]);
    }
  }
  sc.listener = self;
  for (const auto& e : r.store->unit_log()) sc.clock_offset_s = std::max(sc.clock_offset_s, e.end_s);
  for (const auto& e : r.store->rolled_back_units()) sc.clock_offset_s = std::max(sc.clock_offset_s, e.end_s);
  auto scheduler = spawn_scheduler(system, sc);
  ConfigId next_config = 0;
  for (const auto& c : r.store->configs()) next_config = std::max(next_config, c.id + 1);
  ExperimentSteering steering(SteeringContext{r.store, scheduler, s.shape, s.data.partitions.at(0), s.data.validation,
                                              r.spec.epochs, r.spec.seed,
                                              search_info(r.spec.search).takes_added_configs,
                                              options.out_dir, next_config});
  self->send(scheduler, start_atom::value);
  if (observer.started) observer.started(caf::actor_cast<caf::actor>(self));
  // An agent is gone (dead or hung): its workers leave the schedule, and a
  // partition that no live agent holds any more is placed again, from the
  // prepared copy here, on the live agent holding the fewest partitions.
  auto lose_agent = [&](const std::string& name, const std::string& why) {
    auto it = live.agents.find(name);
    if (it == live.agents.end()) return;
    live.agents.erase(it);
    for (auto id : live.workers_of(name)) self->send(scheduler, remove_worker_atom::value, id);
    live.forget(name);
    placer.forget(name);
    say(fmt::format("agent {} is lost ({}); its units go back to the queue", name, why));
    for (const auto& r : placer.place_orphans(live.agents)) {
      if (r.agent.empty()) {
        say(fmt::format("partition {} has no live replica; waiting for an agent to join", r.partition));
      } else if (!r.error.empty()) {
        say(fmt::format("partition {} could not be placed again on {}: {}", r.partition, r.agent, r.error));
      } else {
        say(fmt::format("partition {} lost its last replica; placed again on agent {}", r.partition, r.agent));
        for (auto id : live.workers_of(r.agent))
          self->send(scheduler, holds_atom::value, id, placer.held_by(r.agent));
      }
    }
  };
  for (const auto& [name, agent] : live.agents) self->monitor(agent.agent);
  experiment_done done;
  bool running = true;
  self->receive_while(running)(
      [&](progress_atom, progress_update& p) {
        p.running_agents.clear();
        for (auto id : p.running_workers) {
          auto it = live.agent_of.find(id);
          p.running_agents.push_back(it == live.agent_of.end() ? std::string("?") : it->second);
        }
        if (observer.progress) observer.progress(p);
      },
      [&](join_atom, const std::string& name, const caf::actor& agent, const std::vector<caf::actor>& workers) {
        // Elastic join (or a lost agent back): the node gets replicas, then
        // its workers take units.
        if (live.agents.count(name)) lose_agent(name, "it joined again");
        ClusterView::Agent joining{name, agent, workers};
        live.agents[name] = joining;
        self->monitor(agent);
        auto held = placer.place_joining(joining, live.agents.size());
        if (!held.ok()) {
          say(fmt::format("agent {} joined but could not take partitions: {}", name, held.error()));
          return;
        }
        say(fmt::format("agent {} joined mid-run: holds partitions {}", name, fmt::join(*held, ", ")));
        for (const auto& worker : workers)
          self->send(scheduler, add_worker_atom::value, live.add_worker(name), worker, *held);
      },
      [&](agent_lost_atom, const std::string& name) { lose_agent(name, "it is dead or stopped answering"); },
      [&](caf::down_msg& down) {
        for (const auto& [name, agent] : live.agents)
          if (agent.agent.address() == down.source) return lose_agent(name, "it is gone: " + caf::to_string(down.reason));
      },
      [&](worker_lost_atom, WorkerId id, const caf::actor& worker) {
        // Give a dead agent's down message time to arrive first: only a live
        // agent is asked to respawn.
        self->delayed_send(self, std::chrono::milliseconds(250), respawn_atom::value, id, worker);
      },
      [&](respawn_atom, WorkerId id, const caf::actor& worker) {
        // The node's agent supervises its workers: it replaces a dead one.
        auto owner = live.agent_of.find(id);
        if (owner == live.agent_of.end() || !live.agents.count(owner->second)) return;
        auto name = owner->second;
        self->request(live.agents[name].agent, std::chrono::seconds(10), respawn_atom::value, worker)
            .receive(
                [&](const caf::actor& fresh) {
                  auto fresh_id = live.add_worker(name);
                  say(fmt::format("agent {} respawned worker {} as worker {}", name, id, fresh_id));
                  self->send(scheduler, add_worker_atom::value, fresh_id, fresh, placer.held_by(name));
                },
                [&](const caf::error& e) {
                  say(fmt::format("agent {} could not respawn worker {}: {}", name, id, self->system().render(e)));
                });
      },
      [&](control_atom, const control_request& request) {
        // Steering by hand (the REPL, through the gateway): see experiment_steering.hpp.
        auto promise = self->make_response_promise<control_reply>();
        auto reply = steering.handle(self.ptr(), request);
        if (reply.ok()) {
          reply->experiment = request.experiment;
          promise.deliver(std::move(reply).value());
        } else {
          promise.deliver(caf::make_error(caf::sec::runtime_error, reply.error()));
        }
      },
      [&](done_atom, const experiment_done& d) {
        done = d;
        running = false;
      });
  for (const auto& [name, agent] : live.agents) self->send(agent.agent, release_atom::value, options.experiment_id);
  self->send_exit(sc.checkpoint, caf::exit_reason::user_shutdown);
  if (!done.error.empty() && !done.damaged_state) return Status::error("the experiment stopped: " + done.error);
  return done;
}

// Final statuses, the leaderboard, the test score of the best config, the
// run files.
Result<nlohmann::json> finish(const RunOptions& options, Prepared& r, const experiment_done& done, const fs::path& dir,
                              const Say& say) {
  const auto& spec = r.spec;
  const auto& s = r.setup;
  auto& store = r.store;
  for (auto record : store->configs()) {
    auto it = r.control->outcomes().find(record.id);
    if (it != r.control->outcomes().end()) {
      record.status = it->second.status == ConfigStatus::running ? ConfigStatus::completed : it->second.status;
      record.error = it->second.error;
    }
    store->put_config(record);
  }
  auto log = store->unit_log();
  auto ranked = rank_configs(store->configs(), log, to_string(spec.metric));
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
  double unit_span_s = done.unit_span_s;
  if (store->get_meta("resumes")) {
    // Across restarts: dispatch to commit of every committed unit.
    unit_span_s = 0;
    for (const auto& e : log) unit_span_s += e.end_s - e.start_s;
  }
  RunFacts facts{spec.name, spec.seed, s.workers, s.partitions, spec.epochs, to_string(spec.metric), done.wall_s, unit_span_s};
  auto summary = build_summary(facts, ranked, log, best);
  if (!options.replay_of.empty()) summary["replay_of"] = fs::absolute(options.replay_of).string();
  if (auto resumes = store->get_meta("resumes")) summary["resumes"] = std::stoi(*resumes);
  summary["units_rolled_back"] = store->rolled_back_units().size();
  if (auto st = write_text(dir / "summary.json", summary.dump(2) + "\n"); !st.ok()) return st;
  if (auto st = write_text(dir / "metrics.csv", metrics_csv(ranked)); !st.ok()) return st;
  store->put_meta("finished", "true");
  return summary;
}

}  // namespace

Result<ExperimentSpec> spec_of_run(const StateStore& store, const std::string& run_dir) {
  auto text = store.get_meta("spec");
  if (!text) return Status::error(fmt::format("{}: the run's spec is not in its state store", run_dir));
  return parse_spec_string(*text, store.get_meta("spec_dir").value_or(""), (fs::path(run_dir) / "spec.toml").string());
}

Result<ExperimentSpec> spec_of_run(const std::string& run_dir) {
  auto store = StateStore::open((fs::path(run_dir) / "state").string(), false);
  if (!store.ok()) return Status::error(store.error() + " (is this a run directory?)");
  return spec_of_run(**store, run_dir);
}

Result<nlohmann::json> run_experiment(caf::actor_system& system, const RunOptions& options,
                                      const ClusterView& cluster, const RunObserver& observer) {
  Say say = [&](const std::string& line) {
    if (observer.line) observer.line(line);
  };
  fs::path dir = options.out_dir;
  if (auto v = validate_name("experiment id", options.experiment_id); !v.ok()) return v;
  if (cluster.agents.empty()) return Status::error("the cluster has no agents to run on");
  std::error_code ec;
  Result<Prepared> prepared = Status::error("not prepared");
  if (options.resume) {
    if (!fs::is_directory(dir, ec))
      return Status::error(fmt::format("{}: no such run directory to resume", dir.string()));
    prepared = reopen(options, cluster, dir, say);
  } else {
    if (fs::exists(dir, ec) && !fs::is_empty(dir, ec))
      return Status::error(fmt::format("{}: the run directory already exists and is not empty", dir.string()));
    fs::create_directories(dir, ec);
    if (ec) return Status::error(fmt::format("{}: cannot create the run directory: {}", dir.string(), ec.message()));
    RunDirGuard guard(dir);  // ours from here: removed if the setup fails
    prepared = start_new(options, cluster, dir, observer, guard, say);
  }
  if (!prepared.ok()) return prepared.status();
  models::configure_threads(prepared->spec.cluster.threads_per_worker);
  constexpr int kMaxRecoveries = 3;
  for (int recoveries = 0;; ++recoveries) {
    auto done = train(system, options, cluster, *prepared, observer, say);
    if (!done.ok()) return done.status();
    if (!done->damaged_state) return finish(options, *prepared, *done, dir, say);
    if (recoveries == kMaxRecoveries)
      return Status::error(fmt::format("the experiment stopped: {} ({} recoveries already)", done->error, recoveries));
    // One code path: the same resume as after a crash, on the open store.
    say(fmt::format("warning: {}; resuming from the newest intact checkpoints", done->error));
    prepared = reopen(options, cluster, dir, say, prepared->store);
    if (!prepared.ok()) return prepared.status();
  }
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
