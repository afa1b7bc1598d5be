#include "runtime/cluster/experiment_table.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/base/contract.hpp"
#include "runtime/cluster/peer_checks.hpp"

namespace fs = std::filesystem;

namespace cerebro {

std::string ExperimentTable::run_dir_of(const std::string& id) const {
  return (fs::path(state_dir_) / "experiments" / id).string();
}

void ExperimentTable::add_waiting(const std::string& id, ExperimentFacts facts, const std::string& run_dir) {
  auto& e = entries_[id];
  e.id = id;
  e.facts = std::move(facts);
  e.run_dir = run_dir;
  e.status = ExperimentStatus::waiting;
}

void ExperimentTable::add_finished(const std::string& id, ExperimentFacts facts, const std::string& run_dir,
                                   int64_t units) {
  add_waiting(id, std::move(facts), run_dir);
  auto& e = entries_[id];
  e.status = ExperimentStatus::completed;
  e.progress.units_done = e.progress.units_total = units;
}

const ExperimentEntry* ExperimentTable::unfinished_twin(const std::string& spec_text) const {
  for (const auto& [id, e] : entries_)
    if (e.unfinished() && e.facts.spec_text == spec_text) return &e;
  return nullptr;
}

const ExperimentEntry& ExperimentTable::add_new(ExperimentFacts facts, const std::string& stamp) {
  auto safe = validate_name("name", facts.name).ok() ? facts.name.substr(0, 32) : std::string("experiment");
  // A run found in the state directory may hold the id the count gives after a restart (the same second).
  auto id = fmt::format("{}-{}-{}", safe, stamp, next_number_++);
  while (entries_.count(id)) id = fmt::format("{}-{}-{}", safe, stamp, next_number_++);
  auto& e = entries_[id];
  e.id = id;
  e.facts = std::move(facts);
  e.run_dir = run_dir_of(id);
  e.status = ExperimentStatus::waiting;
  latest_ = id;
  return e;
}

void ExperimentTable::set_status(ExperimentEntry& e, ExperimentStatus status) {
  e.status = status;
  ++e.generation;
}

ExperimentEntry* ExperimentTable::entry(const std::string& id) {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second;
}

void ExperimentTable::start(const std::string& id, const std::vector<std::pair<AgentId, TimePoint>>& agents) {
  auto* e = entry(id);
  if (!e) contract_violation("ExperimentTable::start", "no experiment " + id);
  set_status(*e, ExperimentStatus::running);
  e->followed = false;
  e->liveness = AgentLiveness(AgentLiveness::Duration(e->facts.heartbeat_timeout_s));
  for (const auto& [agent, heard] : agents) e->liveness.joined(agent, heard);
}

bool ExperimentTable::progressed(const std::string& id, const progress_update& progress) {
  auto* e = entry(id);
  if (e) e->progress = progress;
  return e != nullptr;
}

bool ExperimentTable::followed(const std::string& id) {
  auto* e = entry(id);
  if (e) {
    e->followed = true;
    e->paused = false;  // a new follower's run starts unpaused
  }
  return e != nullptr;
}

bool ExperimentTable::set_paused(const std::string& id, bool paused) {
  auto* e = entry(id);
  if (e) e->paused = paused;
  return e != nullptr;
}

bool ExperimentTable::ended(const std::string& id, bool completed, const std::string& error) {
  auto* e = entry(id);
  if (!e) return false;
  e->followed = false;
  e->error = completed ? std::string() : error;
  set_status(*e, completed ? ExperimentStatus::completed : ExperimentStatus::failed);
  return true;
}

std::vector<std::string> ExperimentTable::agent_joined(AgentId agent, TimePoint now) {
  std::vector<std::string> tell;
  for (auto& [id, e] : entries_) {
    if (e.status != ExperimentStatus::running) continue;
    e.liveness.joined(agent, now);
    if (e.followed) tell.push_back(id);
  }
  return tell;
}

void ExperimentTable::heartbeat(AgentId agent, TimePoint now) {
  for (auto& [id, e] : entries_) e.liveness.heartbeat(agent, now);
}

std::vector<std::string> ExperimentTable::agent_gone(AgentId agent) {
  std::vector<std::string> tell;
  for (auto& [id, e] : entries_) {
    if (!e.liveness.tracks(agent)) continue;
    if (e.status == ExperimentStatus::running && e.followed) tell.push_back(id);
    e.liveness.left(agent);
  }
  return tell;
}

std::vector<std::pair<std::string, AgentId>> ExperimentTable::tick(TimePoint now) {
  std::vector<std::pair<std::string, AgentId>> lost;
  for (auto& [id, e] : entries_) {
    // Only a run that is being followed can lose agents; until then its
    // clock keeps running and it hears of them at its first chance.
    if (e.status != ExperimentStatus::running || !e.followed) continue;
    for (const auto& silent : e.liveness.tick(now)) lost.emplace_back(id, silent.agent);
  }
  return lost;
}

Result<AttachAnswer> ExperimentTable::attach(const std::string& id) const {
  auto it = entries_.find(id);
  if (it == entries_.end()) return Status::not_found(fmt::format("no experiment {} on this coordinator", id));
  const auto& e = it->second;
  AttachAnswer answer;
  answer.json = nlohmann::json{{"status", to_string(e.status)}, {"metric", e.facts.metric}}.dump();
  answer.ended = e.ended();
  answer.run_dir = e.run_dir;
  if (e.status == ExperimentStatus::failed)
    answer.files_error = e.error.empty() ? "the experiment failed; see the coordinator's log" : e.error;
  return answer;
}

std::optional<WarmStartRun> ExperimentTable::warm_start_run(const std::string& id) const {
  auto it = entries_.find(id);
  if (it == entries_.end()) return std::nullopt;
  return WarmStartRun{it->second.run_dir, it->second.ended()};
}

const ExperimentEntry* ExperimentTable::find(const std::string& id) const {
  auto it = entries_.find(id.empty() ? latest_ : id);
  return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace cerebro
