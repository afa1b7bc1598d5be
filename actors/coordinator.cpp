#include "actors/coordinator.hpp"

#include <chrono>
#include <mutex>
#include <set>
#include <ctime>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/coordinator_control.hpp"
#include "actors/experiment_runner.hpp"
#include "runtime/net/cluster_validation.hpp"
#include "runtime/search/spec_loader.hpp"
#include "runtime/spec/spec.hpp"
#include "runtime/store/state_store.hpp"

namespace fs = std::filesystem;

namespace cerebro {

namespace {

using Clock = std::chrono::steady_clock;

struct agent_entry {
  int32_t id = 0;
  agent_resources resources;
  caf::actor agent;
  std::vector<caf::actor> workers;
  std::string node;
  Clock::time_point last_heartbeat;
};

struct experiment_entry {
  std::string id;
  std::string name;
  std::string out_dir;
  std::string metric = "val_accuracy";
  std::string spec_text;  // a resubmission of the same spec follows this experiment
  ExperimentStatus status = ExperimentStatus::running;
  progress_update progress;
  double heartbeat_timeout_s = 10;
  std::set<int32_t> lost_agents;  // agents reported lost to the runner
  // Guards what the runner's thread shares with the gateway.
  std::mutex mutex;
  // The actor following the run (set from the runner's thread once training
  // starts): told about agents that join mid-run or are lost.
  caf::actor follower;
  std::vector<caf::actor> clients;  // submitter and attached clients: progress and run files
};

struct coordinator_state {
  coordinator_config config;
  std::map<int32_t, agent_entry> agents;
  std::map<std::string, std::shared_ptr<experiment_entry>> experiments;
  Clock::time_point last_join;
  int32_t next_agent_id = 1;
  int next_experiment = 1;
  std::string latest_experiment;  // for control requests that name none
  static inline const char* name = "cerebro.coordinator";
};

using coordinator_ptr = caf::stateful_actor<coordinator_state>*;

void log_line(const std::string& line) { fmt::print(stderr, "coordinator: {}\n", line); }

std::string new_experiment_id(coordinator_ptr self, const std::string& name) {
  auto now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  auto safe = validate_name("name", name).ok() ? name.substr(0, 32) : std::string("experiment");
  return fmt::format("{}-{}-{}", safe, buf, self->state.next_experiment++);
}

ClusterView snapshot(coordinator_ptr self) {
  ClusterView view;
  for (const auto& [id, a] : self->state.agents) view.agents.push_back({a.resources.name, a.agent, a.workers});
  return view;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Runs one experiment in its own (blocking) actor so the gateway stays
// responsive; progress goes to the submitting client and the status table.
std::vector<caf::actor> clients_of(experiment_entry& entry) {
  std::lock_guard<std::mutex> lock(entry.mutex);
  return entry.clients;
}

// The run files a client receives when the experiment ends.
run_files files_of(const experiment_entry& entry, const std::string& error) {
  run_files files;
  files.experiment = entry.id;
  files.error = error;
  if (!error.empty()) return files;
  for (const char* name : {"summary.json", "metrics.csv", "best_model.pt", "spec.toml"}) {
    auto path = fs::path(entry.out_dir) / name;
    if (!fs::exists(path)) continue;
    files.names.push_back(name);
    files.contents.push_back(read_file(path));
  }
  return files;
}

void start_experiment(coordinator_ptr self, RunOptions options, std::shared_ptr<experiment_entry> entry) {
  auto cluster = snapshot(self);
  {
    std::lock_guard<std::mutex> lock(entry->mutex);
    entry->status = ExperimentStatus::running;
    entry->lost_agents.clear();
  }
  self->spawn<caf::detached>([options, entry, cluster](caf::blocking_actor* runner) {
    RunObserver observer{[&](const std::string& line) {
                           log_line(fmt::format("{}: {}", options.experiment_id, line));
                           progress_update p;
                           p.event = line;
                           for (auto& client : clients_of(*entry)) runner->send(client, progress_atom::value, p);
                         },
                         [&](const progress_update& p) {
                           {
                             std::lock_guard<std::mutex> lock(entry->mutex);
                             entry->progress = p;
                           }
                           for (auto& client : clients_of(*entry)) runner->send(client, progress_atom::value, p);
                         },
                         [&](caf::actor follower) {
                           std::lock_guard<std::mutex> lock(entry->mutex);
                           entry->follower = std::move(follower);
                         }};
    auto summary = run_experiment(runner->system(), options, cluster, observer);
    auto files = files_of(*entry, summary.ok() ? "" : summary.error());
    std::unique_lock<std::mutex> lock(entry->mutex);
    entry->follower = caf::actor{};
    entry->status = summary.ok() ? ExperimentStatus::completed : ExperimentStatus::failed;
    log_line(summary.ok() ? fmt::format("{} completed", options.experiment_id)
                          : fmt::format("{} failed: {}", options.experiment_id, summary.error()));
    auto clients = entry->clients;
    lock.unlock();
    for (auto& client : clients) runner->send(client, files_atom::value, files);
  });
}

// Tells the experiments running on agent `id` that it is lost (dead, hung or
// dropped) unless they know already.
void report_lost_agent(coordinator_ptr self, int32_t id, const std::string& name, double silence_s) {
  for (auto& [experiment, entry] : self->state.experiments) {
    std::lock_guard<std::mutex> lock(entry->mutex);
    if (entry->status != ExperimentStatus::running || !entry->follower || entry->lost_agents.count(id)) continue;
    if (silence_s >= 0 && silence_s <= entry->heartbeat_timeout_s) continue;
    entry->lost_agents.insert(id);
    self->send(entry->follower, agent_lost_atom::value, name);
  }
}

// Once a second: agents silent for longer than an experiment's heartbeat
// timeout are lost to it (their units are requeued); agents silent for longer
// than the coordinator's timeout are dropped (they rejoin when they answer
// again); unfinished experiments found at startup resume once agents have
// (re)joined and the cluster has been quiet for a moment.
void tick(coordinator_ptr self) {
  auto now = Clock::now();
  for (auto it = self->state.agents.begin(); it != self->state.agents.end();) {
    const auto& a = it->second;
    double silence = std::chrono::duration<double>(now - a.last_heartbeat).count();
    report_lost_agent(self, a.id, a.resources.name, silence);
    if (silence > self->state.config.heartbeat_timeout_s) {
      log_line(fmt::format("agent {} sent no heartbeat for {:.0f} s: dropped (it rejoins when it answers again)",
                           a.resources.name, silence));
      report_lost_agent(self, a.id, a.resources.name, -1);
      it = self->state.agents.erase(it);
    } else {
      ++it;
    }
  }
  constexpr auto kRejoinGrace = std::chrono::seconds(3);
  if (!self->state.agents.empty() && now - self->state.last_join > kRejoinGrace) {
    for (auto& [id, entry] : self->state.experiments) {
      if (entry->status != ExperimentStatus::waiting) continue;
      RunOptions options;
      options.experiment_id = entry->id;
      options.out_dir = entry->out_dir;
      options.resume = true;
      log_line(fmt::format("{}: resuming on {} agents", entry->id, self->state.agents.size()));
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
    auto entry = std::make_shared<experiment_entry>();
    entry->id = (*store)->get_meta("experiment_id").value_or(dir.path().filename().string());
    entry->name = spec.ok() ? spec->name : entry->id;
    entry->out_dir = dir.path().string();
    entry->spec_text = (*store)->get_meta("spec").value_or("");
    entry->status = ExperimentStatus::waiting;
    if (spec.ok()) {
      entry->metric = to_string(spec->metric);
      entry->heartbeat_timeout_s = spec->cluster.heartbeat_timeout;
    }
    self->state.experiments[entry->id] = entry;
    log_line(fmt::format("{}: unfinished; resumes when agents have joined", entry->id));
  }
}

nlohmann::json status_json(coordinator_ptr self) {
  // What each agent's workers run now, from the experiments' last progress.
  std::map<std::string, nlohmann::json> running_on_agent;
  for (const auto& [id, e] : self->state.experiments) {
    std::lock_guard<std::mutex> lock(e->mutex);
    if (e->status != ExperimentStatus::running) continue;
    const auto& p = e->progress;
    for (size_t i = 0; i < p.running_units.size() && i < p.running_agents.size(); ++i)
      running_on_agent[p.running_agents[i]].push_back(fmt::format("{}: {}", id, p.running_units[i]));
  }
  nlohmann::json agents = nlohmann::json::array();
  auto now = Clock::now();
  for (const auto& [id, a] : self->state.agents) {
    agents.push_back({{"id", id},
                      {"name", a.resources.name},
                      {"node", a.node},
                      {"workers", a.resources.workers},
                      {"cores", a.resources.cores},
                      {"memory_bytes", a.resources.memory_bytes},
                      {"speed", a.resources.speed},
                      {"heartbeat_age_s", std::chrono::duration<double>(now - a.last_heartbeat).count()},
                      {"state", "joined"},
                      {"running", running_on_agent.count(a.resources.name) ? running_on_agent[a.resources.name]
                                                                           : nlohmann::json::array()}});
  }
  nlohmann::json experiments = nlohmann::json::array();
  for (const auto& [id, e] : self->state.experiments) {
    std::lock_guard<std::mutex> lock(e->mutex);
    experiments.push_back({{"id", id},
                           {"name", e->name},
                           {"status", to_string(e->status)},
                           {"units_done", e->progress.units_done},
                           {"units_total", e->progress.units_total},
                           {"epoch_low", e->progress.epoch_low},
                           {"epoch_high", e->progress.epoch_high},
                           {"elapsed_s", e->progress.elapsed_s}});
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
                       std::lock_guard<std::mutex> lock(it->second->mutex);
                       auto run_dir = fs::path(self->state.config.state_dir) / "experiments" / it->first;
                       return ExperimentRef{it->first, it->second->status, run_dir.string(), it->second->follower};
                     }};
}

caf::behavior coordinator_behavior(coordinator_ptr self, coordinator_config config) {
  self->state.config = std::move(config);
  find_unfinished(self);
  self->send(self, tick_atom::value);
  self->set_down_handler([self](caf::down_msg& msg) {
    for (auto it = self->state.agents.begin(); it != self->state.agents.end(); ++it) {
      if (it->second.agent.address() == msg.source) {
        log_line(fmt::format("agent {} left ({})", it->second.resources.name, caf::to_string(msg.reason)));
        report_lost_agent(self, it->first, it->second.resources.name, -1);
        self->state.agents.erase(it);
        return;
      }
    }
  });
  return {
      [self](join_atom, join_request& r) -> join_reply {
        auto node = caf::to_string(self->current_sender() ? self->current_sender()->node() : caf::node_id{});
        if (!tokens_equal(r.token, self->state.config.token)) {
          log_line(fmt::format("refused a join from node {}: wrong token", node));
          return join_reply{false, "wrong token", -1, caf::actor{}};
        }
        if (auto v = validate_resources(r.resources); !v.ok()) {
          log_line(fmt::format("refused a join from node {}: {}", node, v.message()));
          return join_reply{false, v.message(), -1, caf::actor{}};
        }
        if (!r.agent || static_cast<int32_t>(r.workers.size()) != r.resources.workers) {
          log_line(fmt::format("refused a join from node {}: malformed request", node));
          return join_reply{false, "malformed join request", -1, caf::actor{}};
        }
        for (const auto& [id, a] : self->state.agents)
          if (a.resources.name == r.resources.name) {
            log_line(fmt::format("refused a join from node {}: name {} is taken by a live agent", node,
                                 r.resources.name));
            return join_reply{false, fmt::format("an agent named {} is already joined", r.resources.name), -1,
                              caf::actor{}};
          }
        auto id = self->state.next_agent_id++;
        self->state.last_join = Clock::now();
        self->monitor(r.agent);
        self->state.agents[id] =
            agent_entry{id, r.resources, r.agent, std::move(r.workers), node, Clock::now()};
        log_line(fmt::format("agent {} joined: {} workers, {} cores, speed {:.1f}", r.resources.name,
                             r.resources.workers, r.resources.cores, r.resources.speed));
        const auto& joined = self->state.agents[id];
        for (auto& [experiment, entry] : self->state.experiments) {
          std::lock_guard<std::mutex> lock(entry->mutex);
          if (entry->status == ExperimentStatus::running && entry->follower)
            self->send(entry->follower, join_atom::value, joined.resources.name, joined.agent, joined.workers);
        }
        return join_reply{true, "", id, caf::actor_cast<caf::actor>(self)};
      },
      // Answers whether `id` is a live agent of this coordinator (false after a
      // restart, so the agent rejoins).
      [self](heartbeat_atom, int32_t id) -> bool {
        auto it = self->state.agents.find(id);
        if (it == self->state.agents.end() || !self->current_sender() ||
            self->current_sender()->node() != it->second.agent.node())
          return false;
        it->second.last_heartbeat = Clock::now();
        return true;
      },
      [self](submit_atom, submit_request& r) -> caf::result<std::string> {
        if (!tokens_equal(r.token, self->state.config.token)) {
          log_line("refused a submission: wrong token");
          return caf::make_error(caf::sec::runtime_error, "wrong token");
        }
        if (r.spec_text.size() > (1u << 20)) return caf::make_error(caf::sec::runtime_error, "spec too large");
        auto spec = parse_spec_string(r.spec_text, r.spec_dir, r.origin);
        if (!spec.ok()) return caf::make_error(caf::sec::runtime_error, spec.error());
        for (auto& [id, existing] : self->state.experiments) {
          std::lock_guard<std::mutex> lock(existing->mutex);
          if ((existing->status == ExperimentStatus::running || existing->status == ExperimentStatus::waiting) &&
              existing->spec_text == spec->source_text) {
            // The same spec again (e.g. a client whose coordinator restarted):
            // follow the unfinished experiment instead of starting a twin.
            existing->clients.push_back(caf::actor_cast<caf::actor>(self->current_sender()));
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
        auto entry = std::make_shared<experiment_entry>();
        entry->id = options.experiment_id;
        entry->name = options.spec.name;
        entry->out_dir = options.out_dir;
        entry->metric = to_string(options.spec.metric);
        entry->spec_text = options.spec.source_text;
        entry->heartbeat_timeout_s = options.spec.cluster.heartbeat_timeout;
        entry->clients.push_back(caf::actor_cast<caf::actor>(self->current_sender()));
        self->state.experiments[entry->id] = entry;
        self->state.latest_experiment = entry->id;
        log_line(fmt::format("experiment {} submitted", entry->id));
        start_experiment(self, std::move(options), entry);
        return entry->id;
      },
      // Follows an experiment: progress from now on and its run files at the
      // end (at once if it has ended). Answers {"status", "metric"} as JSON.
      [self](attach_atom, const std::string& token, const std::string& experiment) -> caf::result<std::string> {
        if (!tokens_equal(token, self->state.config.token))
          return caf::make_error(caf::sec::runtime_error, "wrong token");
        auto it = self->state.experiments.find(experiment);
        if (it == self->state.experiments.end())
          return caf::make_error(caf::sec::runtime_error, fmt::format("no experiment {} on this coordinator", experiment));
        auto& entry = *it->second;
        auto client = caf::actor_cast<caf::actor>(self->current_sender());
        std::lock_guard<std::mutex> lock(entry.mutex);
        if (entry.status == ExperimentStatus::completed || entry.status == ExperimentStatus::failed) {
          self->send(client, files_atom::value,
                     files_of(entry, entry.status == ExperimentStatus::failed ? "the experiment failed; see the coordinator's log" : ""));
        } else {
          entry.clients.push_back(client);
        }
        return nlohmann::json{{"status", to_string(entry.status)}, {"metric", entry.metric}}.dump();
      },
      [self](tick_atom) { tick(self); },
      [self](hop_atom, const std::string& token, const std::string& state) -> caf::result<int64_t> {
        if (!tokens_equal(token, self->state.config.token))
          return caf::make_error(caf::sec::runtime_error, "wrong token");
        return static_cast<int64_t>(state.size());
      },
      [self](status_atom, const std::string& token) -> caf::result<std::string> {
        if (!tokens_equal(token, self->state.config.token))
          return caf::make_error(caf::sec::runtime_error, "wrong token");
        return status_json(self).dump();
      },
      [self](control_atom, control_request& r) -> caf::result<control_reply> {
        return handle_control(self, gateway_view(self), std::move(r));
      },
  };
}

}  // namespace

caf::actor spawn_coordinator(caf::actor_system& system, coordinator_config config) {
  return system.spawn(coordinator_behavior, std::move(config));
}

}  // namespace cerebro
