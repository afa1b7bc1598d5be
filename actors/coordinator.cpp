#include "actors/coordinator.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "actors/actors.hpp"
#include "actors/coordinator_control.hpp"
#include "actors/coordinator_datasets.hpp"
#include "actors/coordinator_runs.hpp"
#include "actors/finished_run_reader.hpp"
#include "datasets/prepared_cache.hpp"
#include "runtime/base/log_lines.hpp"
#include "runtime/base/time_format.hpp"
#include "runtime/cluster/coordinator_core.hpp"
#include "runtime/net/error_category.hpp"
#include "runtime/run/warm_start.hpp"
#include "runtime/spec/spec.hpp"
#include "runtime/spec/spec_paths.hpp"

namespace cerebro {

namespace {

struct coordinator_state {
  coordinator_config config;
  std::optional<CoordinatorCore> core;  // every decision; the rest of this state is handles
  std::map<AgentId, agent_handles> agents;
  std::map<std::string, run_follower_actor> followers;       // by experiment, once its training started
  std::map<std::string, std::vector<client_actor>> clients;  // by experiment: submitter and attached clients
  // Answers reads of experiments that do not run (actors/finished_run_reader.hpp).
  finished_run_reader_actor reader;
  // Its registered datasets (actors/coordinator_datasets.hpp); null when datasets.json cannot be
  // read, which `registry_problem` says.
  std::unique_ptr<DatasetRegistry> datasets;
  std::string registry_problem;
  static inline const char* name = "cerebro.coordinator";
};

using coordinator_ptr = coordinator_actor::stateful_pointer<coordinator_state>;

// Through the process's log sink: a REPL shows the lines above its prompt.
void log_line(const std::string& line) { emit_log_line("coordinator: " + line); }

// The actor system's clock: the real one in production, the test's own under
// CAF's deterministic scheduler.
AgentLiveness::TimePoint now(coordinator_ptr self) { return self->clock().now(); }

CoordinatorCore& core(coordinator_ptr self) { return *self->state.core; }

// Where a request came from: an agent in this process (an embedded
// cluster's, whose node CAF leaves unnamed without the middleman) is this
// machine's host name; a remote one is its CAF node id.
std::string node_name(coordinator_ptr self) {
  auto sender = self->current_sender() ? self->current_sender()->node() : caf::node_id{};
  if (!sender || sender == self->node()) return host_name();
  return caf::to_string(sender);
}

ClusterView snapshot(coordinator_ptr self) {
  ClusterView view;
  for (const auto& [id, a] : self->state.agents)
    view.agents.push_back({core(self).agents().find(id)->resources.name, a.agent, a.workers});
  view.fixed = self->state.config.fixed_agents;
  return view;
}

// The submitter or attacher of a request: it receives the run's progress and files.
void add_client(coordinator_ptr self, const std::string& experiment) {
  if (auto client = caf::actor_cast<client_actor>(self->current_sender()))
    self->state.clients[experiment].push_back(std::move(client));
}

template <class... Ts>
void tell_clients(coordinator_ptr self, const std::string& experiment, const Ts&... xs) {
  if (auto it = self->state.clients.find(experiment); it != self->state.clients.end())
    for (const auto& client : it->second) self->send(client, xs...);
}

void tell_lost(coordinator_ptr self, const std::vector<LostNotice>& lost) {
  for (const auto& n : lost)
    if (auto it = self->state.followers.find(n.experiment); it != self->state.followers.end())
      self->send(it->second, agent_lost_atom::value, n.agent_name);
}

// The core started (or resumed) the experiment: its runner goes, on the
// agents there are now, and the reader of ended runs closes its store.
void start_run(coordinator_ptr self, const RunStart& start, RunOptions options) {
  options.experiment_id = start.experiment;
  options.out_dir = start.run_dir;
  options.resume = start.resume;
  self->state.followers.erase(start.experiment);
  self->send(self->state.reader, drop_store_atom::value, start.experiment);
  self->state.config.parts.start_run(self, options, snapshot(self));
}

void run_ended(coordinator_ptr self, const std::string& experiment, bool completed, const run_files& files) {
  if (!core(self).ended(experiment, completed, files.error)) return;
  self->state.followers.erase(experiment);
  self->send(self->state.reader, drop_store_atom::value, experiment);
  log_line(completed ? fmt::format("{} completed", experiment) : fmt::format("{} failed: {}", experiment, files.error));
  tell_clients(self, experiment, files_atom::value, files);
}

join_reply join(coordinator_ptr self, join_request r) {
  auto node = node_name(self);
  JoinAttempt attempt{r.token, r.resources, static_cast<bool>(r.agent), static_cast<int32_t>(r.workers.size()), node};
  auto joined = core(self).join(attempt, now(self));
  if (!joined.decision.accepted()) {
    log_line(fmt::format("refused a join from node {}: {}", node, describe(joined.decision, attempt)));
    return join_reply{false, joined.decision.reason, -1, coordinator_actor{}};
  }
  const auto& res = r.resources;
  log_line(
      fmt::format("agent {} joined: {} workers, {} cores, speed {:.1f}", res.name, res.workers, res.cores, res.speed));
  self->monitor(r.agent);
  for (const auto& experiment : joined.tell_followers)
    self->send(self->state.followers[experiment], join_atom::value, res.name, r.agent, r.workers);
  self->state.agents[joined.decision.id] = agent_handles{std::move(r.agent), std::move(r.workers)};
  return join_reply{true, "", joined.decision.id, caf::actor_cast<coordinator_actor>(self)};
}

// The agent's connection closed (or it ended): the experiments that still count on it hear it is lost.
void agent_down(coordinator_ptr self, const caf::down_msg& msg) {
  for (const auto& [id, a] : self->state.agents) {
    if (a.agent.address() != msg.source) continue;
    auto departure = core(self).leave(id);
    self->state.agents.erase(id);
    if (!departure) return;
    log_line(fmt::format("agent {} left ({})", departure->agent.resources.name, caf::to_string(msg.reason)));
    return tell_lost(self, departure->tell);
  }
}

// Once a second: agents lost to experiments or dropped from the cluster,
// waiting experiments resumed (runtime/cluster/coordinator_core.hpp).
void tick(coordinator_ptr self) {
  auto decisions = core(self).tick(now(self));
  for (const auto& d : decisions.dropped) {
    log_line(fmt::format("agent {} sent no heartbeat for {:.0f} s: dropped (it rejoins when it answers again)",
                         d.agent.resources.name, d.silence.count()));
    self->state.agents.erase(d.agent.id);
  }
  tell_lost(self, decisions.lost);
  for (const auto& resume : decisions.resume) {
    log_line(fmt::format("{}: resuming on {} agents", resume.experiment, self->state.agents.size()));
    start_run(self, resume, RunOptions{});
  }
  self->delayed_send(self, std::chrono::seconds(1), tick_atom::value);
}

caf::result<std::string> submit(coordinator_ptr self, const submit_request& r) {
  if (auto token = core(self).check_token(r.token); !token.ok()) {
    log_line("refused a submission: wrong token");
    return to_error(token);
  }
  if (r.spec_text.size() > (1u << 20)) return make_error(StatusCode::invalid_argument, "spec too large");
  const auto& config = self->state.config;
  auto allowed = allowed_places(config.data_roots, config.state_dir, r.spec_dir);
  const auto* registry = self->state.datasets.get();
  if (registry) allowed.datasets = registry->upload_dirs();
  auto spec = parse_spec_string(r.spec_text, path_base(allowed, r.spec_dir), r.origin, allowed.roots,
                                registry ? registry->tables() : nlohmann::json::object());
  if (!spec.ok()) return make_error(StatusCode::invalid_argument, spec.error());
  // warm_start may name this coordinator's experiments by id.
  auto ids = resolve_warm_start_ids(*spec, [self](const std::string& id) -> std::optional<KnownExperiment> {
    auto run = core(self).experiments().warm_start_run(id);
    if (!run) return std::nullopt;
    return KnownExperiment{run->run_dir, run->finished};
  });
  if (!ids.ok()) return make_error(StatusCode::invalid_argument, ids.message());
  if (!allowed.roots.empty()) {
    if (auto inside = check_spec_paths(*spec, allowed); !inside.ok()) {
      log_line(fmt::format("refused a submission: {}", inside.message()));
      return to_error(inside);
    }
  }
  ExperimentFacts facts{spec->name, to_string(spec->metric), spec->source_text, spec->cluster.heartbeat_timeout};
  auto submitted = core(self).submit(std::move(facts), compact_local_timestamp_now());
  if (!submitted.ok()) return to_error(submitted.status());
  const auto id = submitted->experiment;
  add_client(self, id);
  if (!submitted->start) {
    log_line(fmt::format("experiment {} resubmitted: the client follows it", id));
    return id;
  }
  log_line(fmt::format("experiment {} submitted", id));
  RunOptions options;
  options.spec = std::move(spec).value();
  start_run(self, *submitted->start, std::move(options));
  return id;
}

// Follows an experiment: progress from now on and its run files at the end
// (at once if it has ended). Answers {"status", "metric"} as JSON.
caf::result<std::string> attach(coordinator_ptr self, const std::string& token, const std::string& experiment) {
  if (auto checked = core(self).check_token(token); !checked.ok()) return to_error(checked);
  auto answer = core(self).experiments().attach(experiment);
  if (!answer.ok()) return to_error(answer.status());
  if (!answer->ended) {
    add_client(self, experiment);
  } else if (auto client = caf::actor_cast<client_actor>(self->current_sender())) {
    auto outcome = answer->files_error.empty() ? Status::ok_status() : Status::failed_precondition(answer->files_error);
    self->send(client, files_atom::value, run_files_of(experiment, answer->run_dir, outcome));
  }
  return answer->json;
}

// What the steering handler (actors/coordinator_control.cpp) sees of the experiments.
GatewayView gateway_view(coordinator_ptr self) {
  auto find = [self](const std::string& id) -> std::optional<ExperimentRef> {
    const auto* e = core(self).experiments().find(id);
    if (!e) return std::nullopt;
    auto follower = self->state.followers.find(e->id);
    return ExperimentRef{e->id, e->status, e->run_dir,
                         follower == self->state.followers.end() ? run_follower_actor{} : follower->second,
                         e->generation};
  };
  return GatewayView{self->state.config.token, find, self->state.reader,
                     [self](const std::string& id, bool paused) { core(self).paused(id, paused); }};
}

void start(coordinator_ptr self, coordinator_config config) {
  auto& parts = config.parts;
  if (!parts.start_run) parts.start_run = start_run_thread;
  if (!parts.spawn_reader) parts.spawn_reader = spawn_finished_run_reader;
  if (!parts.find_stored) parts.find_stored = find_stored_runs;
  self->state.core.emplace(
      CoordinatorSettings{config.token, config.state_dir, config.listen, config.heartbeat_timeout_s});
  self->state.config = std::move(config);
  self->state.reader = self->state.config.parts.spawn_reader(self);
  if (auto registry = DatasetRegistry::open(self->state.config.state_dir); registry.ok()) {
    self->state.datasets = std::move(registry).value();
  } else {
    self->state.registry_problem = registry.error();
    log_line(
        fmt::format("the registered datasets cannot be read, so none can be registered or removed until "
                    "the file is repaired or moved away: {}",
                    registry.error()));
  }
  for (auto& run : self->state.config.parts.find_stored(self->state.config.state_dir)) {
    if (run.finished)
      core(self).add_finished(run.id, std::move(run.facts), run.run_dir, run.units);
    else
      core(self).add_waiting(run.id, std::move(run.facts), run.run_dir);
  }
  self->set_down_handler([self](caf::down_msg& msg) { agent_down(self, msg); });
  self->send(self, tick_atom::value);
}

coordinator_actor::behavior_type coordinator_behavior(coordinator_ptr self, coordinator_config config) {
  start(self, std::move(config));
  return {
      [self](join_atom, join_request& r) -> join_reply { return join(self, std::move(r)); },
      // Answers whether `id` is a live agent of this coordinator (false after a
      // restart, so the agent rejoins).
      [self](heartbeat_atom, int32_t id) -> bool {
        auto it = self->state.agents.find(id);
        const bool from_its_node = it != self->state.agents.end() && self->current_sender() &&
                                   self->current_sender()->node() == it->second.agent.node();
        return core(self).heartbeat(id, from_its_node, now(self));
      },
      [self](submit_atom, const submit_request& r) { return submit(self, r); },
      [self](datasets_atom, const dataset_request& r) -> caf::result<std::string> {
        if (auto checked = core(self).check_token(r.token); !checked.ok()) return to_error(checked);
        const auto& settings = self->state.config;
        const auto now_unix =
            std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
                .count();
        auto answer = answer_datasets(
            self->state.datasets.get(), self->state.registry_problem,
            DatasetPlaces{settings.data_roots, settings.state_dir, datasets::default_cache_dir()}, r, now_unix);
        if (!answer.ok()) return to_error(answer.status());
        if (static_cast<DatasetCommand>(r.command) != DatasetCommand::list)
          log_line(
              fmt::format("dataset {} {}", r.name,
                          static_cast<DatasetCommand>(r.command) == DatasetCommand::add ? "registered" : "removed"));
        return answer->dump();
      },
      [self](attach_atom, const std::string& token, const std::string& experiment) {
        return attach(self, token, experiment);
      },
      [self](status_atom, const std::string& token) -> caf::result<std::string> {
        if (auto checked = core(self).check_token(token); !checked.ok()) return to_error(checked);
        return core(self).status_json(now(self));
      },
      [self](control_atom, control_request& r) { return handle_control(self, gateway_view(self), std::move(r)); },
      [self](hop_atom, const std::string& token, const std::string& state) -> caf::result<int64_t> {
        if (auto checked = core(self).check_token(token); !checked.ok()) return to_error(checked);
        return static_cast<int64_t>(state.size());
      },
      [self](tick_atom) { tick(self); },
      [self](run_line_atom, const std::string& experiment, const std::string& line) {
        log_line(fmt::format("{}: {}", experiment, line));
        progress_update p;
        p.event = line;
        tell_clients(self, experiment, progress_atom::value, p);
      },
      [self](progress_atom, const std::string& experiment, const progress_update& p) {
        if (core(self).progressed(experiment, p)) tell_clients(self, experiment, progress_atom::value, p);
      },
      [self](run_started_atom, const std::string& experiment, const run_follower_actor& follower) {
        if (core(self).followed(experiment)) self->state.followers[experiment] = follower;
      },
      [self](run_ended_atom, const std::string& experiment, bool completed, const run_files& files) {
        run_ended(self, experiment, completed, files);
      },
  };
}

}  // namespace

coordinator_actor spawn_coordinator(caf::actor_system& system, coordinator_config config) {
  return system.spawn(coordinator_behavior, std::move(config));
}

}  // namespace cerebro
