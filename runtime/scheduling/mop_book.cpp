#include "runtime/scheduling/mop_book.hpp"
#include "runtime/scheduling/mop_book_detail.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "runtime/scheduling/bit_kernels.hpp"
#include "runtime/base/status.hpp"

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

using mop_book_detail::is_over;
using mop_book_detail::misuse;

int32_t MopBook::IdSlots::find_sparse(int32_t id) const {
  auto it = sparse_.find(id);
  return it == sparse_.end() ? -1 : it->second;
}

int32_t MopBook::IdSlots::insert(int32_t id) {
  int32_t slot = next_++;
  if (id >= 0 && id < kDenseIds) {
    if (static_cast<size_t>(id) >= dense_.size()) dense_.resize(id + 1, -1);
    dense_[id] = slot;
  } else {
    sparse_[id] = slot;
  }
  return slot;
}

MopBook::MopBook(int32_t num_partitions) : num_partitions_(num_partitions) {
  if (num_partitions < 1) {
    misuse("MopBook", fmt::format("num_partitions must be >= 1, got {}", num_partitions));
  }
  needers_.resize(num_partitions);
}

void MopBook::unknown_worker(WorkerId w, const char* operation) {
  misuse(operation, fmt::format("unknown worker {}", w));
}

void MopBook::unknown_config(ConfigId c, const char* operation) {
  misuse(operation, fmt::format("unknown config {}", c));
}

void MopBook::SlotSet::insert(int32_t slot) {
  size_t word = static_cast<size_t>(slot) / 64;
  if (word >= words_.size()) {
    words_.resize(word + 1, 0);
    block_counts_.resize((words_.size() + kWordsPerBlock - 1) / kWordsPerBlock, 0);
  }
  uint64_t bit = uint64_t{1} << (slot % 64);
  if (words_[word] & bit) return;
  words_[word] |= bit;
  ++block_counts_[word / kWordsPerBlock];
  ++count_;
  ++version_;
}

void MopBook::SlotSet::erase(int32_t slot) {
  size_t word = static_cast<size_t>(slot) / 64;
  uint64_t bit = uint64_t{1} << (slot % 64);
  if (word >= words_.size() || !(words_[word] & bit)) return;
  words_[word] &= ~bit;
  --block_counts_[word / kWordsPerBlock];
  --count_;
  ++version_;
}

int32_t MopBook::SlotSet::count_common(const SlotSet& other) const {
  return bits::count_common(words_.data(), other.words_.data(), std::min(words_.size(), other.words_.size()));
}

bool MopBook::SlotSet::intersects(const SlotSet& other) const {
  return bits::intersects(words_.data(), other.words_.data(), std::min(words_.size(), other.words_.size()));
}

int32_t MopBook::SlotSet::select_common(const SlotSet& other, int32_t k) const {
  return bits::select_common(words_.data(), other.words_.data(), std::min(words_.size(), other.words_.size()), k);
}

int32_t MopBook::SlotSet::count_common_words(const SlotSet& other, std::vector<uint16_t>& counts) const {
  size_t words = std::min(words_.size(), other.words_.size());
  counts.resize(bits::counted_length(words));
  return bits::count_common_words(words_.data(), other.words_.data(), words, counts.data());
}

int32_t MopBook::SlotSet::select_common_counted(const SlotSet& other, const std::vector<uint16_t>& counts,
                                                int32_t k) const {
  size_t words = std::min(words_.size(), other.words_.size());
  return bits::select_common_counted(words_.data(), other.words_.data(), counts.data(), words, k);
}

int32_t MopBook::SlotSet::select(int32_t k) const {
  size_t block = 0;
  while (k >= block_counts_[block]) k -= block_counts_[block++];
  return bits::select(words_.data(), block * kWordsPerBlock, k);
}

void MopBook::make_pending(ConfigEntry& config, PartitionId p) {
  if (config.pending.insert(p)) needers_[p].insert(config.slot);
}

void MopBook::make_not_pending(ConfigEntry& config, PartitionId p) {
  if (config.pending.erase(p)) needers_[p].erase(config.slot);
}

void MopBook::make_all_pending(ConfigEntry& config) {
  for (PartitionId p = 0; p < num_partitions_; ++p) make_pending(config, p);
}

void MopBook::clear_pending(ConfigEntry& config) {
  config.pending.for_each([&](PartitionId p) { needers_[p].erase(config.slot); });
  config.pending.clear();
}

void MopBook::add_worker(WorkerId w, std::vector<PartitionId> holds) {
  std::set<PartitionId> held;
  for (PartitionId p : holds) {
    if (p < 0 || p >= num_partitions_) {
      misuse("add_worker", fmt::format("worker {} holds partition {}, outside 0..{}", w, p, num_partitions_ - 1));
    }
    held.insert(p);
  }
  int32_t slot = worker_slots_.find(w);
  if (slot < 0) {
    slot = worker_slots_.insert(w);
    workers_.emplace_back();
  }
  WorkerEntry& worker = workers_[slot];
  worker.present = true;
  worker.held = PartitionSet(num_partitions_);
  for (PartitionId p : held) worker.held.insert(p);
  worker.holds.assign(held.begin(), held.end());
  present_workers_[w] = slot;
}

std::optional<Unit> MopBook::remove_worker(WorkerId w) {
  WorkerEntry& worker = worker_entry(w, "remove_worker");
  std::optional<Unit> running = worker.running;
  worker = WorkerEntry{};
  present_workers_.erase(w);
  if (!running) return std::nullopt;
  --running_units_;
  ConfigEntry& config = config_entry(running->config, "remove_worker");
  // A gang member: the config stays busy until the other members end.
  release_config(config);
  if (is_over(config.state)) return std::nullopt;
  make_pending(config, running->partition);
  return running;
}

void MopBook::add_config(ConfigId c, int32_t epochs, int32_t first_epoch) {
  if (config_slots_.find(c) >= 0) misuse("add_config", fmt::format("config {} was already added", c));
  if (epochs < 1) misuse("add_config", fmt::format("config {}: epochs must be >= 1, got {}", c, epochs));
  if (first_epoch < 0 || first_epoch > epochs) {
    misuse("add_config", fmt::format("config {}: first_epoch {} outside 0..{}", c, first_epoch, epochs));
  }
  int32_t slot = config_slots_.insert(c);
  config_order_.emplace(c, slot);
  configs_.emplace_back();
  hot_.push_back(HotConfig{c, first_epoch, false});
  idle_.insert(slot);
  ConfigEntry& entry = configs_.back();
  entry.id = c;
  entry.slot = slot;
  entry.epochs = epochs;
  entry.first_epoch = first_epoch;
  entry.epoch = first_epoch;
  entry.pending = PartitionSet(num_partitions_);
  if (first_epoch == epochs) {
    entry.state = ConfigState::finished;
  } else {
    ++live_configs_;
    make_all_pending(entry);
  }
}

std::vector<Unit> MopBook::eligible_units(WorkerId w) const {
  const WorkerEntry& worker = worker_entry(w, "eligible_units");
  std::vector<Unit> out;
  if (worker.running) return out;
  for (const auto& [id, slot] : config_order_) {
    const ConfigEntry& config = configs_[slot];
    if (config.state != ConfigState::pending_epoch || config.running_on) continue;
    for (PartitionId p : worker.holds) {
      if (config.pending.contains(p)) out.push_back(Unit{id, p, config.epoch});
    }
  }
  return out;
}

std::vector<WorkerId> MopBook::idle_workers() const {
  std::vector<WorkerId> out;
  for (const auto& [id, slot] : present_workers_) {
    if (!workers_[slot].running) out.push_back(id);
  }
  return out;
}

std::vector<WorkerId> MopBook::workers() const {
  std::vector<WorkerId> out;
  out.reserve(present_workers_.size());
  for (const auto& [id, slot] : present_workers_) out.push_back(id);
  return out;
}

void MopBook::bad_position(int32_t position) const {
  misuse("config_needing_at", fmt::format("position {} outside 0..{}", position, configs_.size() - 1));
}

void MopBook::bad_partition(PartitionId p, const char* operation) const {
  misuse(operation, fmt::format("partition {} outside 0..{}", p, num_partitions_ - 1));
}

int32_t MopBook::count_idle_needing(PartitionId p) const {
  const SlotSet& set = needers(p, "count_idle_needing");
  IdleCount& last = last_idle_count_;
  last.partition = p;
  last.needers_version = set.version();
  last.idle_version = idle_.version();
  return set.count_common_words(idle_, last.counts);
}

bool MopBook::has_idle_needing(PartitionId p) const { return needers(p, "has_idle_needing").intersects(idle_); }

ConfigId MopBook::idle_config_needing(PartitionId p, int32_t k) const {
  const SlotSet& set = needers(p, "idle_config_needing");
  // select_common checks the range as it goes: no second count.
  const IdleCount& last = last_idle_count_;
  bool counted = last.partition == p && last.needers_version == set.version() && last.idle_version == idle_.version();
  int32_t slot = k < 0 ? -1 : counted ? set.select_common_counted(idle_, last.counts, k) : set.select_common(idle_, k);
  if (slot < 0) {
    misuse("idle_config_needing",
           fmt::format("partition {}: index {} outside 0..{}", p, k, set.count_common(idle_) - 1));
  }
  return hot_[slot].id;
}

ConfigId MopBook::config_needing(PartitionId p, int32_t k) const {
  const SlotSet& set = needers(p, "config_needing");
  if (k < 0 || k >= set.count()) {
    misuse("config_needing", fmt::format("partition {}: index {} outside 0..{}", p, k, set.count() - 1));
  }
  return hot_[set.select(k)].id;
}

std::string MopBook::start_problem(WorkerId w, const Unit& u) const {
  const int32_t worker_slot = worker_slots_.find(w);
  if (worker_slot < 0 || !workers_[worker_slot].present) return fmt::format("unknown worker {}", w);
  const WorkerEntry& worker = workers_[worker_slot];
  if (worker.running)
    return fmt::format("worker {} is busy with {}, cannot start {}", w, to_string(*worker.running), to_string(u));
  const int32_t config_slot = config_slots_.find(u.config);
  if (config_slot < 0) return fmt::format("unknown config {}", u.config);
  const ConfigEntry& config = configs_[config_slot];
  if (config.state != ConfigState::pending_epoch)
    return fmt::format("{}: config is {}, not pending_epoch", to_string(u), to_string(config.state));
  if (config.running_on) {
    return fmt::format("{}: config {} is busy on worker {}{} (isolation)", to_string(u), u.config, *config.running_on,
                       config.handed_over ? ", its unit committing" : "");
  }
  if (u.epoch != config.epoch) return fmt::format("{}: config {} is in epoch {}", to_string(u), u.config, config.epoch);
  if (u.partition < 0 || u.partition >= num_partitions_)
    return fmt::format("{}: partition outside 0..{}", to_string(u), num_partitions_ - 1);
  if (!worker.held.contains(u.partition))
    return fmt::format("{}: worker {} does not hold partition {}", to_string(u), w, u.partition);
  // The index holds exactly the pending partitions of pending_epoch configs
  // (checked above), and its word is in cache: the policy just looked there.
  if (!needers_[u.partition].contains(config.slot))
    return fmt::format("{}: unit is not pending (already done this epoch)", to_string(u));
  return {};
}

Status MopBook::can_start(WorkerId w, const Unit& u) const {
  auto problem = start_problem(w, u);
  return problem.empty() ? Status::ok_status() : Status::failed_precondition(problem);
}

void MopBook::start(WorkerId w, const Unit& u) {
  if (auto problem = start_problem(w, u); !problem.empty()) misuse("start", problem);
  WorkerEntry& worker = worker_entry(w, "start");
  ConfigEntry& config = config_entry(u.config, "start");
  make_not_pending(config, u.partition);
  config.running_on = w;
  config.running_count = 1;
  hot_[config.slot].busy = true;
  idle_.erase(config.slot);
  worker.running = u;
  ++running_units_;
}

MopBook::ConfigEntry& MopBook::finish_attempt(WorkerId w, const Unit& u, const char* operation) {
  WorkerEntry& worker = worker_entry(w, operation);
  if (!worker.running) {
    misuse(operation, fmt::format("worker {} is idle, it is not running {}", w, to_string(u)));
  }
  if (*worker.running != u) {
    misuse(operation, fmt::format("worker {} is running {}, not {}", w, to_string(*worker.running), to_string(u)));
  }
  if (worker.in_gang) {
    misuse(operation, fmt::format("worker {} runs {} as a gang member: the gang ends as a whole "
                                  "(complete_gang / requeue_gang)",
                                  w, to_string(u)));
  }
  worker.running.reset();
  --running_units_;
  ConfigEntry& config = config_entry(u.config, operation);
  release_config(config);
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
  if (!is_over(config.state)) make_pending(config, u.partition);
}

void MopBook::advance(ConfigId c) {
  ConfigEntry& config = config_entry(c, "advance");
  if (config.state != ConfigState::awaiting_decision) {
    misuse("advance",
           fmt::format("config {} is {}, not awaiting_decision (epoch {})", c, to_string(config.state), config.epoch));
  }
  ++config.epoch;
  hot_[config.slot].epoch = config.epoch;
  if (config.epoch == config.epochs) {
    config.state = ConfigState::finished;
    --live_configs_;
  } else {
    config.state = ConfigState::pending_epoch;
    make_all_pending(config);
  }
}

void MopBook::end_config(ConfigId c, ConfigState final_state, const char* operation) {
  ConfigEntry& config = config_entry(c, operation);
  if (config.state != ConfigState::pending_epoch && config.state != ConfigState::awaiting_decision) {
    misuse(operation, fmt::format("config {} is already {}", c, to_string(config.state)));
  }
  config.state = final_state;
  --live_configs_;
  clear_pending(config);
}

void MopBook::stop(ConfigId c) { end_config(c, ConfigState::stopped, "stop"); }
void MopBook::fail(ConfigId c) { end_config(c, ConfigState::failed, "fail"); }

int32_t MopBook::planned_epochs(ConfigId c) const { return config_entry(c, "planned_epochs").epochs; }

std::optional<Unit> MopBook::running_on(WorkerId w) const { return worker_entry(w, "running_on").running; }

std::vector<PartitionId> MopBook::pending_partitions(ConfigId c) const {
  return config_entry(c, "pending_partitions").pending.to_vector();
}

int64_t MopBook::units_total() const {
  int64_t total = 0;
  for (const ConfigEntry& config : configs_) {
    if (config.state == ConfigState::stopped || config.state == ConfigState::failed) {
      total += config.units_done;
    } else {
      total += int64_t{config.epochs - config.first_epoch} * num_partitions_;
    }
  }
  return total;
}

int64_t MopBook::units_done() const { return units_done_; }

bool MopBook::all_done() const { return live_configs_ == 0 && running_units_ == 0 && handed_over_units_ == 0; }

std::vector<ConfigId> MopBook::configs() const {
  std::vector<ConfigId> out;
  out.reserve(config_order_.size());
  for (const auto& entry : config_order_) out.push_back(entry.first);
  return out;
}

int64_t MopBook::remaining_units(ConfigId c) const { return summary(c).remaining_units; }

MopBook::ConfigSummary MopBook::summary(ConfigId c) const {
  const ConfigEntry& config = config_entry(c, "summary");
  int64_t remaining = 0;
  if (!is_over(config.state)) {
    int64_t in_epoch = static_cast<int64_t>(config.pending.count()) + config.running_count;
    remaining = in_epoch + int64_t{config.epochs - config.epoch - 1} * num_partitions_;
  }
  return ConfigSummary{config.state, config.epoch, config.epochs, remaining, config.running_on.has_value()};
}

}  // namespace cerebro
