#include "actors/coordinator.hpp"

#include <chrono>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/coordinator_control.hpp"
#include "actors/experiment_runner.hpp"
#include "actors/finished_run_reader.hpp"
#include "runtime/base/file_io.hpp"
#include "runtime/base/log_lines.hpp"
#include "runtime/base/time_format.hpp"
#include "runtime/cluster/agent_liveness.hpp"
#include "runtime/net/cluster_validation.hpp"
#include "runtime/net/error_category.hpp"
#include "runtime/run/warm_start.hpp"
#include "runtime/search/spec_loader.hpp"
#include "runtime/spec/spec.hpp"
#include "runtime/store/state_store.hpp"

namespace fs = std::filesystem;

namespace cerebro {

namespace {

using Clock = AgentLiveness::Clock;
using Seconds = AgentLiveness::Duration;

struct agent_entry {
  int32_t id = 0;
  agent_resources resources;
  agent_actor agent;
  std::vector<worker_actor> workers;
  std::string node;
};

struct experiment_entry {
  std::string id;
  std::string name;
  std::string out_dir;
  std::string metric = "val_accuracy";
  std::string spec_text;  // a resubmission of the same spec follows this experiment
  ExperimentStatus status = ExperimentStatus::running;
  // Bumped at each change of status (see set_status): the reader of ended
  // runs never answers from a store opened before the change.
  uint64_t generation = 0;
  progress_update progress;        // the last one its runner reported
  double heartbeat_timeout_s = 10;
  // The agents of the run, against the spec's heartbeat timeout: one that
  // falls silent is reported lost to the run once.
  AgentLiveness liveness{Seconds(10)};
  // The actor following the run (reported by the runner once training
  // starts): told about agents that join mid-run or are lost.
  caf::actor follower;
  std::vector<caf::actor> clients;  // submitter and attached clients: progress and run files
};

struct coordinator_state {
  coordinator_config config;
  std::map<int32_t, agent_entry> agents;
  // The agents against the coordinator's own timeout: a silent one is dropped.
  AgentLiveness liveness{Seconds(10)};
  std::map<std::string, experiment_entry> experiments;
  Clock::time_point last_join;
  int32_t next_agent_id = 1;
  int next_experiment = 1;
  std::string latest_experiment;  // for control requests that name none
  // Answers reads of experiments that do not run (actors/finished_run_reader.hpp).
  caf::actor reader;
  static inline const char* name = "cerebro.coordinator";
};

using coordinator_ptr = coordinator_actor::stateful_pointer<coordinator_state>;

// Through the process's log sink: a REPL shows the lines above its prompt.
void log_line(const std::string& line) { emit_log_line("coordinator: " + line); }

// Where a request came from: an agent in this process (an embedded
// cluster's, whose node CAF leaves unnamed without the middleman) is this
// machine's host name; a remote one is its CAF node id.
std::string node_name(coordinator_ptr self) {
  auto sender = self->current_sender() ? self->current_sender()->node() : caf::node_id{};
  if (!sender || sender == self->node()) return host_name();
  return caf::to_string(sender);
}

std::string new_experiment_id(coordinator_ptr self, const std::string& name) {
  auto safe = validate_name("name", name).ok() ? name.substr(0, 32) : std::string("experiment");
  return fmt::format("{}-{}-{}", safe, compact_local_timestamp_now(), self->state.next_experiment++);
}

ClusterView snapshot(coordinator_ptr self) {
  ClusterView view;
  for (const auto& [id, a] : self->state.agents) view.agents.push_back({a.resources.name, a.agent, a.workers});
  view.fixed = self->state.config.fixed_agents;
  return view;
}

// The run files a client receives when the experiment ends.
run_files files_of(const std::string& experiment, const std::string& out_dir, const std::string& error) {
  run_files files;
  files.experiment = experiment;
  files.error = error;
  if (!error.empty()) return files;
  std::vector<std::string> names{"summary.json", "metrics.csv", "best_model.pt", "spec.toml"};
  // The TensorBoard logs too (tensorboard/config-N/events...), as paths under the run directory.
  std::error_code ec;
  for (fs::recursive_directory_iterator it(fs::path(out_dir) / "tensorboard", ec), end; !ec && it != end;
       it.increment(ec))
    if (it->is_regular_file()) names.push_back(fs::relative(it->path(), out_dir).generic_string());
  for (const auto& name : names) {
    auto path = fs::path(out_dir) / name;
    if (!fs::exists(path)) continue;
    auto contents = read_whole_file(path.string());
    if (!contents.ok()) return files_of(experiment, out_dir, contents.error());
    files.names.push_back(name);
    files.contents.push_back(std::move(contents).value());
  }
  return files;
}

// A new status for the experiment: its generation moves on, and the reader
// of ended runs closes the store it may hold (the run reopens it, or it ended).
void set_status(coordinator_ptr self, experiment_entry& entry, ExperimentStatus status) {
  entry.status = status;
  ++entry.generation;
  if (self->state.reader) caf::anon_send(self->state.reader, drop_store_atom::value, entry.id);
}

// Clients and followers are untyped actors, which a typed actor reaches by
// anon_send (they do not answer these messages).
template <class... Ts>
void tell_clients(const experiment_entry& entry, const Ts&... xs) {
  for (const auto& client : entry.clients) caf::anon_send(client, xs...);
}

// Runs one experiment in its own (blocking) actor so the gateway stays
// responsive. The runner shares nothing with the gateway: it reports by
// message, and the gateway keeps the status table and tells the clients.
void start_experiment(coordinator_ptr self, RunOptions options, experiment_entry& entry) {
  set_status(self, entry, ExperimentStatus::running);
  entry.follower = caf::actor{};
  entry.liveness = AgentLiveness(Seconds(entry.heartbeat_timeout_s));
  for (const auto& [id, a] : self->state.agents)
    entry.liveness.joined(id, self->state.liveness.last_heard(id).value_or(Clock::now()));
  auto cluster = snapshot(self);
  auto gateway = caf::actor_cast<coordinator_actor>(self);
  self->spawn<caf::detached>([options, cluster, gateway](caf::blocking_actor* runner) {
    const auto& id = options.experiment_id;
    RunObserver observer{
        [&](const std::string& line) { runner->send(gateway, run_line_atom::value, id, line); },
        [&](const progress_update& p) { runner->send(gateway, progress_atom::value, id, p); },
        [&](caf::actor follower) { runner->send(gateway, run_started_atom::value, id, std::move(follower)); }};
    auto summary = run_experiment(runner->system(), options, cluster, observer);
    // The files are read here, in the runner's thread, not in the gateway.
    runner->send(gateway, run_ended_atom::value, id, summary.ok(),
                 files_of(id, options.out_dir, summary.ok() ? "" : summary.error()));
  });
}

// Tells a running experiment that agent `id` is lost (dead, hung or
// dropped), unless it was told already or has no follower yet.
void tell_lost(coordinator_ptr self, experiment_entry& entry, int32_t id) {
  auto it = self->state.agents.find(id);
  if (entry.status != ExperimentStatus::running || !entry.follower || it == self->state.agents.end()) return;
  caf::anon_send(entry.follower, agent_lost_atom::value, it->second.resources.name);
}

// Agent `id` is leaving the coordinator's table (dropped, or its connection
// closed): the experiments that still count on it hear it is lost.
void forget_agent(coordinator_ptr self, int32_t id) {
  for (auto& [experiment, entry] : self->state.experiments) {
    if (!entry.liveness.tracks(id)) continue;
    tell_lost(self, entry, id);
    entry.liveness.left(id);
  }
  self->state.liveness.left(id);
  self->state.agents.erase(id);
}

// Once a second: agents silent for longer than an experiment's heartbeat
// timeout are lost to it (their units are requeued); agents silent for longer
// than the coordinator's timeout are dropped (they rejoin when they answer
// again); unfinished experiments found at startup resume once agents have
// (re)joined and the cluster has been quiet for a moment.
void tick(coordinator_ptr self) {
  auto now = Clock::now();
  for (auto& [experiment, entry] : self->state.experiments) {
    // Only a run that is being followed can lose agents; until then its
    // clock keeps running and it hears of them at its first chance.
    if (entry.status != ExperimentStatus::running || !entry.follower) continue;
    for (const auto& lost : entry.liveness.tick(now)) tell_lost(self, entry, lost.agent);
  }
  for (const auto& lost : self->state.liveness.tick(now)) {
    auto it = self->state.agents.find(lost.agent);
    if (it == self->state.agents.end()) continue;
    log_line(fmt::format("agent {} sent no heartbeat for {:.0f} s: dropped (it rejoins when it answers again)",
                         it->second.resources.name, lost.silence.count()));
    forget_agent(self, lost.agent);
  }
  constexpr auto kRejoinGrace = std::chrono::seconds(3);
  if (!self->state.agents.empty() && now - self->state.last_join > kRejoinGrace) {
    for (auto& [id, entry] : self->state.experiments) {
      if (entry.status != ExperimentStatus::waiting) continue;
      RunOptions options;
      options.experiment_id = entry.id;
      options.out_dir = entry.out_dir;
      options.resume = true;
      log_line(fmt::format("{}: resuming on {} agents", entry.id, self->state.agents.size()));
      start_experiment(self, std::move(options), entry);
    }
  }
  self->delayed_send(self, std::chrono::seconds(1), tick_atom::value);
}

// Unfinished experiments in the state directory (the coordinator was stopped
// or died while they ran) wait for agents, then resume.
void find_unfinished(coordinator_ptr self) {
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator(fs::path(self->state.config.state_dir) / "experiments", ec)) {
    if (!fs::is_directory(dir.path() / "state")) continue;
    auto store = StateStore::open((dir.path() / "state").string(), false);
    if (!store.ok()) {
      log_line(fmt::format("{}: cannot open its state ({}); not resumed", dir.path().string(), store.error()));
      continue;
    }
    if ((*store)->get_meta("finished") == std::optional<std::string>("true")) continue;
    auto spec = spec_of_run(**store, dir.path().string());
    experiment_entry entry;
    entry.id = (*store)->get_meta("experiment_id").value_or(dir.path().filename().string());
    entry.name = spec.ok() ? spec->name : entry.id;
    entry.out_dir = dir.path().string();
    entry.spec_text = (*store)->get_meta("spec").value_or("");
    entry.status = ExperimentStatus::waiting;
    if (spec.ok()) {
      entry.metric = to_string(spec->metric);
      entry.heartbeat_timeout_s = spec->cluster.heartbeat_timeout;
    }
    log_line(fmt::format("{}: unfinished; resumes when agents have joined", entry.id));
    auto id = entry.id;
    self->state.experiments[id] = std::move(entry);
  }
}

nlohmann::json status_json(coordinator_ptr self) {
  // What each agent's workers run now, from the experiments' last progress.
  std::map<std::string, nlohmann::json> running_on_agent;
  for (const auto& [id, e] : self->state.experiments) {
    if (e.status != ExperimentStatus::running) continue;
    const auto& p = e.progress;
    for (size_t i = 0; i < p.running_units.size() && i < p.running_agents.size(); ++i)
      running_on_agent[p.running_agents[i]].push_back(fmt::format("{}: {}", id, p.running_units[i]));
  }
  nlohmann::json agents = nlohmann::json::array();
  auto now = Clock::now();
  for (const auto& [id, a] : self->state.agents) {
    Seconds age = now - self->state.liveness.last_heard(id).value_or(now);
    agents.push_back({{"id", id},
                      {"name", a.resources.name},
                      {"node", a.node},
                      {"workers", a.resources.workers},
                      {"cores", a.resources.cores},
                      {"memory_bytes", a.resources.memory_bytes},
                      {"speed", a.resources.speed},
                      {"heartbeat_age_s", age.count()},
                      {"state", "joined"},
                      {"running", running_on_agent.count(a.resources.name) ? running_on_agent[a.resources.name]
                                                                           : nlohmann::json::array()}});
  }
  nlohmann::json experiments = nlohmann::json::array();
  for (const auto& [id, e] : self->state.experiments) {
    experiments.push_back({{"id", id},
                           {"name", e.name},
                           {"status", to_string(e.status)},
                           {"units_done", e.progress.units_done},
                           {"units_total", e.progress.units_total},
                           {"units_running", e.progress.running_units.size()},
                           {"units_failed", e.progress.units_failed},
                           {"metric", e.metric},
                           {"epoch_low", e.progress.epoch_low},
                           {"epoch_high", e.progress.epoch_high},
                           {"elapsed_s", e.progress.elapsed_s}});
    // Several objectives: the front so far (runtime/api/pareto_view.hpp), for the REPL's wait.
    if (!e.progress.pareto_json.empty())
      experiments.back()["pareto"] = nlohmann::json::parse(e.progress.pareto_json, nullptr, false);
  }
  return {{"listen", self->state.config.listen},
          {"latest", self->state.latest_experiment},
          {"agents", agents},
          {"experiments", experiments}};
}

// What the steering handler (actors/coordinator_control.cpp) sees of the experiments.
GatewayView gateway_view(coordinator_ptr self) {
  return GatewayView{self->state.config.token, [self](const std::string& id) -> std::optional<ExperimentRef> {
                       auto it = self->state.experiments.find(id.empty() ? self->state.latest_experiment : id);
                       if (it == self->state.experiments.end()) return std::nullopt;
                       auto run_dir = fs::path(self->state.config.state_dir) / "experiments" / it->first;
                       return ExperimentRef{it->first, it->second.status, run_dir.string(), it->second.follower,
                                            it->second.generation};
                     },
                     self->state.reader};
}

// The experiment a runner reports about; null for one this coordinator does
// not know (cannot happen: runners are spawned for table entries only).
experiment_entry* reported(coordinator_ptr self, const std::string& experiment) {
  auto it = self->state.experiments.find(experiment);
  return it == self->state.experiments.end() ? nullptr : &it->second;
}

coordinator_actor::behavior_type coordinator_behavior(coordinator_ptr self, coordinator_config config) {
  self->state.config = std::move(config);
  self->state.liveness = AgentLiveness(Seconds(self->state.config.heartbeat_timeout_s));
  // Linked: it ends with the gateway.
  self->state.reader = self->spawn<caf::detached + caf::linked>(finished_run_reader);
  find_unfinished(self);
  self->send(self, tick_atom::value);
  self->set_down_handler([self](caf::down_msg& msg) {
    for (auto& [id, a] : self->state.agents) {
      if (a.agent.address() == msg.source) {
        log_line(fmt::format("agent {} left ({})", a.resources.name, caf::to_string(msg.reason)));
        forget_agent(self, id);
        return;
      }
    }
  });
  return {
      [self](join_atom, join_request& r) -> join_reply {
        auto node = node_name(self);
        if (!tokens_equal(r.token, self->state.config.token)) {
          log_line(fmt::format("refused a join from node {}: wrong token", node));
          return join_reply{false, "wrong token", -1, coordinator_actor{}};
        }
        if (auto v = validate_resources(r.resources); !v.ok()) {
          log_line(fmt::format("refused a join from node {}: {}", node, v.message()));
          return join_reply{false, v.message(), -1, coordinator_actor{}};
        }
        if (!r.agent || static_cast<int32_t>(r.workers.size()) != r.resources.workers) {
          log_line(fmt::format("refused a join from node {}: malformed request", node));
          return join_reply{false, "malformed join request", -1, coordinator_actor{}};
        }
        for (const auto& [id, a] : self->state.agents)
          if (a.resources.name == r.resources.name) {
            log_line(fmt::format("refused a join from node {}: name {} is taken by a live agent", node,
                                 r.resources.name));
            return join_reply{false, fmt::format("an agent named {} is already joined", r.resources.name), -1,
                              coordinator_actor{}};
          }
        auto id = self->state.next_agent_id++;
        auto now = Clock::now();
        self->state.last_join = now;
        self->monitor(r.agent);
        self->state.agents[id] = agent_entry{id, r.resources, r.agent, std::move(r.workers), node};
        self->state.liveness.joined(id, now);
        log_line(fmt::format("agent {} joined: {} workers, {} cores, speed {:.1f}", r.resources.name,
                             r.resources.workers, r.resources.cores, r.resources.speed));
        const auto& joined = self->state.agents[id];
        for (auto& [experiment, entry] : self->state.experiments) {
          if (entry.status != ExperimentStatus::running) continue;
          entry.liveness.joined(id, now);
          if (entry.follower)
            caf::anon_send(entry.follower, join_atom::value, joined.resources.name, joined.agent, joined.workers);
        }
        return join_reply{true, "", id, caf::actor_cast<coordinator_actor>(self)};
      },
      // Answers whether `id` is a live agent of this coordinator (false after a
      // restart, so the agent rejoins).
      [self](heartbeat_atom, int32_t id) -> bool {
        auto it = self->state.agents.find(id);
        if (it == self->state.agents.end() || !self->current_sender() ||
            self->current_sender()->node() != it->second.agent.node())
          return false;
        auto now = Clock::now();
        self->state.liveness.heartbeat(id, now);
        for (auto& [experiment, entry] : self->state.experiments) entry.liveness.heartbeat(id, now);
        return true;
      },
      [self](submit_atom, submit_request& r) -> caf::result<std::string> {
        if (!tokens_equal(r.token, self->state.config.token)) {
          log_line("refused a submission: wrong token");
          return caf::make_error(caf::sec::runtime_error, "wrong token");
        }
        if (r.spec_text.size() > (1u << 20)) return make_error(StatusCode::invalid_argument, "spec too large");
        auto spec = parse_spec_string(r.spec_text, r.spec_dir, r.origin);
        if (!spec.ok()) return make_error(StatusCode::invalid_argument, spec.error());
        // warm_start may name this coordinator's experiments by id.
        auto ids = resolve_warm_start_ids(*spec, [self](const std::string& id) -> std::optional<KnownExperiment> {
          auto it = self->state.experiments.find(id);
          if (it == self->state.experiments.end()) return std::nullopt;
          const auto status = it->second.status;
          return KnownExperiment{(fs::path(self->state.config.state_dir) / "experiments" / id).string(),
                                 status != ExperimentStatus::running && status != ExperimentStatus::waiting};
        });
        if (!ids.ok()) return make_error(StatusCode::invalid_argument, ids.message());
        for (auto& [id, existing] : self->state.experiments) {
          if ((existing.status == ExperimentStatus::running || existing.status == ExperimentStatus::waiting) &&
              existing.spec_text == spec->source_text) {
            // The same spec again (e.g. a client whose coordinator restarted):
            // follow the unfinished experiment instead of starting a twin.
            existing.clients.push_back(caf::actor_cast<caf::actor>(self->current_sender()));
            log_line(fmt::format("experiment {} resubmitted: the client follows it", id));
            return id;
          }
        }
        if (self->state.agents.empty())
          return caf::make_error(caf::sec::runtime_error, "no agent has joined the cluster yet");
        RunOptions options;
        options.spec = std::move(spec).value();
        options.experiment_id = new_experiment_id(self, options.spec.name);
        options.out_dir = (fs::path(self->state.config.state_dir) / "experiments" / options.experiment_id).string();
        auto& entry = self->state.experiments[options.experiment_id];
        entry.id = options.experiment_id;
        entry.name = options.spec.name;
        entry.out_dir = options.out_dir;
        entry.metric = to_string(options.spec.metric);
        entry.spec_text = options.spec.source_text;
        entry.heartbeat_timeout_s = options.spec.cluster.heartbeat_timeout;
        entry.clients.push_back(caf::actor_cast<caf::actor>(self->current_sender()));
        self->state.latest_experiment = entry.id;
        log_line(fmt::format("experiment {} submitted", entry.id));
        start_experiment(self, std::move(options), entry);
        return entry.id;
      },
      // Follows an experiment: progress from now on and its run files at the
      // end (at once if it has ended). Answers {"status", "metric"} as JSON.
      [self](attach_atom, const std::string& token, const std::string& experiment) -> caf::result<std::string> {
        if (!tokens_equal(token, self->state.config.token))
          return caf::make_error(caf::sec::runtime_error, "wrong token");
        auto it = self->state.experiments.find(experiment);
        if (it == self->state.experiments.end())
          return caf::make_error(caf::sec::runtime_error, fmt::format("no experiment {} on this coordinator", experiment));
        auto& entry = it->second;
        auto client = caf::actor_cast<caf::actor>(self->current_sender());
        if (entry.status == ExperimentStatus::completed || entry.status == ExperimentStatus::failed) {
          caf::anon_send(client, files_atom::value,
                     files_of(entry.id, entry.out_dir,
                              entry.status == ExperimentStatus::failed ? "the experiment failed; see the coordinator's log" : ""));
        } else {
          entry.clients.push_back(client);
        }
        return nlohmann::json{{"status", to_string(entry.status)}, {"metric", entry.metric}}.dump();
      },
      [self](status_atom, const std::string& token) -> caf::result<std::string> {
        if (!tokens_equal(token, self->state.config.token))
          return caf::make_error(caf::sec::runtime_error, "wrong token");
        return status_json(self).dump();
      },
      [self](control_atom, control_request& r) -> caf::result<control_reply> {
        return handle_control(self, gateway_view(self), std::move(r));
      },
      [self](hop_atom, const std::string& token, const std::string& state) -> caf::result<int64_t> {
        if (!tokens_equal(token, self->state.config.token))
          return caf::make_error(caf::sec::runtime_error, "wrong token");
        return static_cast<int64_t>(state.size());
      },
      [self](tick_atom) { tick(self); },
      [self](run_line_atom, const std::string& experiment, const std::string& line) {
        log_line(fmt::format("{}: {}", experiment, line));
        auto* entry = reported(self, experiment);
        if (!entry) return;
        progress_update p;
        p.event = line;
        tell_clients(*entry, progress_atom::value, p);
      },
      [self](progress_atom, const std::string& experiment, const progress_update& p) {
        auto* entry = reported(self, experiment);
        if (!entry) return;
        entry->progress = p;
        tell_clients(*entry, progress_atom::value, p);
      },
      [self](run_started_atom, const std::string& experiment, const caf::actor& follower) {
        if (auto* entry = reported(self, experiment)) entry->follower = follower;
      },
      [self](run_ended_atom, const std::string& experiment, bool completed, const run_files& files) {
        auto* entry = reported(self, experiment);
        if (!entry) return;
        entry->follower = caf::actor{};
        set_status(self, *entry, completed ? ExperimentStatus::completed : ExperimentStatus::failed);
        log_line(completed ? fmt::format("{} completed", experiment)
                           : fmt::format("{} failed: {}", experiment, files.error));
        tell_clients(*entry, files_atom::value, files);
      },
  };
}

}  // namespace

coordinator_actor spawn_coordinator(caf::actor_system& system, coordinator_config config) {
  return system.spawn(coordinator_behavior, std::move(config));
}

}  // namespace cerebro
