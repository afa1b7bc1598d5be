#include "runtime/mop_book.hpp"

#include <fmt/format.h>

#include "runtime/status.hpp"

namespace cerebro {

std::string to_string(ConfigState state) {
  switch (state) {
    case ConfigState::pending_epoch: return "pending_epoch";
    case ConfigState::awaiting_decision: return "awaiting_decision";
    case ConfigState::finished: return "finished";
    case ConfigState::stopped: return "stopped";
    case ConfigState::failed: return "failed";
  }
  return "unknown";
}

namespace {

[[noreturn]] void misuse(const char* operation, const std::string& what) {
  throw Error(fmt::format("MopBook::{}: {}", operation, what));
}

bool is_over(ConfigState s) {
  return s == ConfigState::finished || s == ConfigState::stopped || s == ConfigState::failed;
}

std::set<PartitionId> all_partitions(int32_t n) {
  std::set<PartitionId> out;
  for (PartitionId p = 0; p < n; ++p) out.insert(p);
  return out;
}

}  // namespace

MopBook::MopBook(int32_t num_partitions) : num_partitions_(num_partitions) {
  if (num_partitions < 1) {
    misuse("MopBook", fmt::format("num_partitions must be >= 1, got {}", num_partitions));
  }
}

MopBook::WorkerEntry& MopBook::worker_entry(WorkerId w, const char* operation) {
  auto it = workers_.find(w);
  if (it == workers_.end()) misuse(operation, fmt::format("unknown worker {}", w));
  return it->second;
}

const MopBook::WorkerEntry& MopBook::worker_entry(WorkerId w, const char* operation) const {
  auto it = workers_.find(w);
  if (it == workers_.end()) misuse(operation, fmt::format("unknown worker {}", w));
  return it->second;
}

MopBook::ConfigEntry& MopBook::config_entry(ConfigId c, const char* operation) {
  auto it = configs_.find(c);
  if (it == configs_.end()) misuse(operation, fmt::format("unknown config {}", c));
  return it->second;
}

const MopBook::ConfigEntry& MopBook::config_entry(ConfigId c, const char* operation) const {
  auto it = configs_.find(c);
  if (it == configs_.end()) misuse(operation, fmt::format("unknown config {}", c));
  return it->second;
}

void MopBook::add_worker(WorkerId w, std::vector<PartitionId> holds) {
  std::set<PartitionId> held;
  for (PartitionId p : holds) {
    if (p < 0 || p >= num_partitions_) {
      misuse("add_worker", fmt::format("worker {} holds partition {}, outside 0..{}", w, p,
                                       num_partitions_ - 1));
    }
    held.insert(p);
  }
  workers_[w].holds = std::move(held);
}

const std::set<PartitionId>& MopBook::holdings(WorkerId w) const {
  return worker_entry(w, "holdings").holds;
}

std::optional<Unit> MopBook::remove_worker(WorkerId w) {
  auto it = workers_.find(w);
  if (it == workers_.end()) misuse("remove_worker", fmt::format("unknown worker {}", w));
  std::optional<Unit> running = it->second.running;
  workers_.erase(it);
  if (!running) return std::nullopt;
  ConfigEntry& config = configs_.at(running->config);
  config.running_on.reset();
  if (is_over(config.state)) return std::nullopt;
  config.pending.insert(running->partition);
  return running;
}

void MopBook::add_config(ConfigId c, int32_t epochs, int32_t first_epoch) {
  if (configs_.count(c)) misuse("add_config", fmt::format("config {} was already added", c));
  if (epochs < 1) misuse("add_config", fmt::format("config {}: epochs must be >= 1, got {}", c, epochs));
  if (first_epoch < 0 || first_epoch > epochs) {
    misuse("add_config", fmt::format("config {}: first_epoch {} outside 0..{}", c, first_epoch, epochs));
  }
  ConfigEntry entry;
  entry.epochs = epochs;
  entry.first_epoch = first_epoch;
  entry.epoch = first_epoch;
  if (first_epoch == epochs) {
    entry.state = ConfigState::finished;
  } else {
    entry.pending = all_partitions(num_partitions_);
  }
  configs_.emplace(c, std::move(entry));
}

std::vector<Unit> MopBook::eligible_units(WorkerId w) const {
  const WorkerEntry& worker = worker_entry(w, "eligible_units");
  std::vector<Unit> out;
  if (worker.running) return out;
  for (const auto& [id, config] : configs_) {
    if (config.state != ConfigState::pending_epoch || config.running_on) continue;
    for (PartitionId p : config.pending) {
      if (worker.holds.count(p)) out.push_back(Unit{id, p, config.epoch});
    }
  }
  return out;
}

std::vector<WorkerId> MopBook::idle_workers() const {
  std::vector<WorkerId> out;
  for (const auto& [id, worker] : workers_) {
    if (!worker.running) out.push_back(id);
  }
  return out;
}

void MopBook::start(WorkerId w, const Unit& u) {
  WorkerEntry& worker = worker_entry(w, "start");
  if (worker.running) {
    misuse("start", fmt::format("worker {} is busy with {}, cannot start {}", w,
                                to_string(*worker.running), to_string(u)));
  }
  ConfigEntry& config = config_entry(u.config, "start");
  if (config.state != ConfigState::pending_epoch) {
    misuse("start", fmt::format("{}: config is {}, not pending_epoch", to_string(u),
                                to_string(config.state)));
  }
  if (config.running_on) {
    misuse("start", fmt::format("{}: config {} is busy on worker {} (isolation)", to_string(u),
                                u.config, *config.running_on));
  }
  if (u.epoch != config.epoch) {
    misuse("start", fmt::format("{}: config {} is in epoch {}", to_string(u), u.config, config.epoch));
  }
  if (u.partition < 0 || u.partition >= num_partitions_) {
    misuse("start", fmt::format("{}: partition outside 0..{}", to_string(u), num_partitions_ - 1));
  }
  if (!worker.holds.count(u.partition)) {
    misuse("start", fmt::format("{}: worker {} does not hold partition {}", to_string(u), w,
                                u.partition));
  }
  if (!config.pending.count(u.partition)) {
    misuse("start", fmt::format("{}: unit is not pending (already done this epoch)", to_string(u)));
  }
  config.pending.erase(u.partition);
  config.running_on = w;
  worker.running = u;
}

MopBook::ConfigEntry& MopBook::finish_attempt(WorkerId w, const Unit& u, const char* operation) {
  WorkerEntry& worker = worker_entry(w, operation);
  if (!worker.running) {
    misuse(operation, fmt::format("worker {} is idle, it is not running {}", w, to_string(u)));
  }
  if (*worker.running != u) {
    misuse(operation, fmt::format("worker {} is running {}, not {}", w, to_string(*worker.running),
                                  to_string(u)));
  }
  worker.running.reset();
  ConfigEntry& config = configs_.at(u.config);
  config.running_on.reset();
  return config;
}

bool MopBook::complete(WorkerId w, const Unit& u) {
  ConfigEntry& config = finish_attempt(w, u, "complete");
  if (is_over(config.state)) return false;  // stopped/failed while it ran
  ++config.units_done;
  ++units_done_;
  if (!config.pending.empty()) return false;
  config.state = ConfigState::awaiting_decision;
  return true;
}

void MopBook::requeue(WorkerId w, const Unit& u) {
  ConfigEntry& config = finish_attempt(w, u, "requeue");
  if (!is_over(config.state)) config.pending.insert(u.partition);
}

void MopBook::advance(ConfigId c) {
  ConfigEntry& config = config_entry(c, "advance");
  if (config.state != ConfigState::awaiting_decision) {
    misuse("advance", fmt::format("config {} is {}, not awaiting_decision (epoch {})", c,
                                  to_string(config.state), config.epoch));
  }
  ++config.epoch;
  if (config.epoch == config.epochs) {
    config.state = ConfigState::finished;
  } else {
    config.state = ConfigState::pending_epoch;
    config.pending = all_partitions(num_partitions_);
  }
}

void MopBook::end_config(ConfigId c, ConfigState final_state, const char* operation) {
  ConfigEntry& config = config_entry(c, operation);
  if (config.state != ConfigState::pending_epoch && config.state != ConfigState::awaiting_decision) {
    misuse(operation, fmt::format("config {} is already {}", c, to_string(config.state)));
  }
  config.state = final_state;
  config.pending.clear();
}

void MopBook::stop(ConfigId c) { end_config(c, ConfigState::stopped, "stop"); }
void MopBook::fail(ConfigId c) { end_config(c, ConfigState::failed, "fail"); }

ConfigState MopBook::state(ConfigId c) const { return config_entry(c, "state").state; }
int32_t MopBook::epoch(ConfigId c) const { return config_entry(c, "epoch").epoch; }
int32_t MopBook::planned_epochs(ConfigId c) const { return config_entry(c, "planned_epochs").epochs; }

bool MopBook::config_busy(ConfigId c) const {
  return config_entry(c, "config_busy").running_on.has_value();
}

std::optional<Unit> MopBook::running_on(WorkerId w) const {
  return worker_entry(w, "running_on").running;
}

std::vector<PartitionId> MopBook::pending_partitions(ConfigId c) const {
  const ConfigEntry& config = config_entry(c, "pending_partitions");
  return {config.pending.begin(), config.pending.end()};
}

int64_t MopBook::units_total() const {
  int64_t total = 0;
  for (const auto& [id, config] : configs_) {
    if (config.state == ConfigState::stopped || config.state == ConfigState::failed) {
      total += config.units_done;
    } else {
      total += int64_t{config.epochs - config.first_epoch} * num_partitions_;
    }
  }
  return total;
}

int64_t MopBook::units_done() const { return units_done_; }

bool MopBook::all_done() const {
  for (const auto& [id, config] : configs_) {
    if (!is_over(config.state)) return false;
  }
  for (const auto& [id, worker] : workers_) {
    if (worker.running) return false;
  }
  return true;
}

std::vector<ConfigId> MopBook::configs() const {
  std::vector<ConfigId> out;
  out.reserve(configs_.size());
  for (const auto& entry : configs_) out.push_back(entry.first);
  return out;
}

int64_t MopBook::remaining_units(ConfigId c) const {
  const ConfigEntry& config = config_entry(c, "remaining_units");
  if (is_over(config.state)) return 0;
  int64_t in_epoch = static_cast<int64_t>(config.pending.size()) + (config.running_on ? 1 : 0);
  return in_epoch + int64_t{config.epochs - config.epoch - 1} * num_partitions_;
}

}  // namespace cerebro
