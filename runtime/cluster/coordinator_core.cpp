#include "runtime/cluster/coordinator_core.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace cerebro {

CoordinatorCore::CoordinatorCore(CoordinatorSettings settings)
    : settings_(std::move(settings)),
      agents_(settings_.token, Duration(settings_.heartbeat_timeout_s)),
      experiments_(settings_.state_dir) {}

Status CoordinatorCore::check_token(const std::string& presented) const {
  return agents_.token_matches(presented) ? Status::ok_status() : Status::invalid_argument("wrong token");
}

CoordinatorCore::Joined CoordinatorCore::join(const JoinAttempt& attempt, TimePoint now) {
  Joined joined{agents_.join(attempt, now), {}};
  if (joined.decision.accepted()) joined.tell_followers = experiments_.agent_joined(joined.decision.id, now);
  return joined;
}

bool CoordinatorCore::heartbeat(AgentId id, bool from_its_node, TimePoint now) {
  if (!agents_.heartbeat(id, from_its_node, now)) return false;
  experiments_.heartbeat(id, now);
  return true;
}

std::vector<LostNotice> CoordinatorCore::notices(const std::vector<std::string>& experiments,
                                                 const AgentInfo& agent) const {
  std::vector<LostNotice> tell;
  for (const auto& id : experiments) tell.push_back({id, agent.id, agent.resources.name});
  return tell;
}

std::optional<CoordinatorCore::Departure> CoordinatorCore::leave(AgentId id) {
  auto agent = agents_.leave(id);
  if (!agent) return std::nullopt;
  return Departure{*agent, notices(experiments_.agent_gone(id), *agent)};
}

CoordinatorCore::TickDecisions CoordinatorCore::tick(TimePoint now) {
  TickDecisions out;
  for (const auto& [experiment, id] : experiments_.tick(now))
    if (const auto* agent = agents_.find(id)) out.lost.push_back({experiment, id, agent->resources.name});
  out.dropped = agents_.tick(now);
  for (const auto& dropped : out.dropped) {
    auto tell = notices(experiments_.agent_gone(dropped.agent.id), dropped.agent);
    out.lost.insert(out.lost.end(), tell.begin(), tell.end());
  }
  auto last_join = agents_.last_join();
  if (!agents_.empty() && last_join && now - *last_join > kRejoinGrace) {
    std::vector<std::string> waiting;
    for (const auto& [id, e] : experiments_.entries())
      if (e.status == ExperimentStatus::waiting) waiting.push_back(id);
    for (const auto& id : waiting) out.resume.push_back(start(id, true));
  }
  return out;
}

RunStart CoordinatorCore::start(const std::string& id, bool resume) {
  std::vector<std::pair<AgentId, TimePoint>> heard;
  for (const auto& [agent, info] : agents_.agents()) heard.emplace_back(agent, *agents_.last_heard(agent));
  experiments_.start(id, heard);
  return RunStart{id, experiments_.find(id)->run_dir, resume};
}

Result<CoordinatorCore::Submission> CoordinatorCore::submit(ExperimentFacts facts, const std::string& stamp) {
  // The same spec again (e.g. a client whose coordinator restarted): follow
  // the unfinished experiment instead of starting a twin.
  if (const auto* twin = experiments_.unfinished_twin(facts.spec_text)) return Submission{twin->id, std::nullopt};
  if (agents_.empty()) return Status::unavailable("no agent has joined the cluster yet");
  const auto& entry = experiments_.add_new(std::move(facts), stamp);
  auto id = entry.id;
  return Submission{id, start(id, false)};
}

std::string CoordinatorCore::status_json(TimePoint now) const {
  // What each agent's workers run now, from the experiments' last progress.
  std::map<std::string, nlohmann::json> running_on_agent;
  for (const auto& [id, e] : experiments_.entries()) {
    if (e.status != ExperimentStatus::running) continue;
    const auto& p = e.progress;
    for (size_t i = 0; i < p.running_units.size() && i < p.running_agents.size(); ++i)
      running_on_agent[p.running_agents[i]].push_back(fmt::format("{}: {}", id, p.running_units[i]));
  }
  nlohmann::json agents = nlohmann::json::array();
  for (const auto& [id, a] : agents_.agents()) {
    Duration age = now - agents_.last_heard(id).value_or(now);
    auto running = running_on_agent.find(a.resources.name);
    agents.push_back({{"id", id},
                      {"name", a.resources.name},
                      {"node", a.node},
                      {"workers", a.resources.workers},
                      {"cores", a.resources.cores},
                      {"memory_bytes", a.resources.memory_bytes},
                      {"speed", a.resources.speed},
                      {"heartbeat_age_s", age.count()},
                      {"state", "joined"},
                      {"running", running != running_on_agent.end() ? running->second : nlohmann::json::array()}});
  }
  nlohmann::json experiments = nlohmann::json::array();
  for (const auto& [id, e] : experiments_.entries()) {
    experiments.push_back({{"id", id},
                           {"name", e.facts.name},
                           {"status", to_string(e.status)},
                           {"units_done", e.progress.units_done},
                           {"units_total", e.progress.units_total},
                           {"units_running", e.progress.running_units.size()},
                           {"units_failed", e.progress.units_failed},
                           {"metric", e.facts.metric},
                           {"epoch_low", e.progress.epoch_low},
                           {"epoch_high", e.progress.epoch_high},
                           {"elapsed_s", e.progress.elapsed_s}});
    if (e.status == ExperimentStatus::failed) experiments.back()["error"] = e.error;
    if (e.status == ExperimentStatus::running) experiments.back()["paused"] = e.paused;
    // The best so far, as its runner last reported it: what a progress line shows without the detail.
    if (e.progress.best_config >= 0)
      experiments.back()["best"] = {{"config", e.progress.best_config}, {"metric", e.progress.best_metric}};
    // Several objectives: the front so far (runtime/api/pareto_view.hpp), for the REPL's wait.
    if (!e.progress.pareto_json.empty())
      experiments.back()["pareto"] = nlohmann::json::parse(e.progress.pareto_json, nullptr, false);
  }
  return nlohmann::json{
      {"listen", settings_.listen}, {"latest", experiments_.latest()}, {"agents", agents}, {"experiments", experiments}}
      .dump();
}

}  // namespace cerebro
