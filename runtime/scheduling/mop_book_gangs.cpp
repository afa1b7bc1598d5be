// MopBook's data-parallel gangs: one attempt of one config over
// k >= 2 of its pending partitions on k workers, committed or requeued whole.
// Split from mop_book.cpp to keep each file readable in one sitting.
#include <set>

#include <fmt/format.h>

#include "runtime/base/status.hpp"
#include "runtime/scheduling/mop_book.hpp"
#include "runtime/scheduling/mop_book_detail.hpp"

namespace cerebro {

using mop_book_detail::is_over;
using mop_book_detail::misuse;

void MopBook::release_config(ConfigEntry& config) {
  if (--config.running_count > 0) return;
  config.running_count = 0;
  config.running_on.reset();
  hot_[config.slot].busy = false;
  idle_.insert(config.slot);
}

std::string MopBook::gang_problem(const std::vector<GangMember>& members, bool starting) const {
  if (members.size() < 2) return fmt::format("a gang needs at least 2 members, got {}", members.size());
  const Unit& first = members.front().unit;
  const int32_t config_slot = config_slots_.find(first.config);
  if (config_slot < 0) return fmt::format("unknown config {}", first.config);
  const ConfigEntry& config = configs_[config_slot];
  std::set<WorkerId> workers;
  std::set<PartitionId> partitions;
  for (const GangMember& m : members) {
    if (m.unit.config != first.config || m.unit.epoch != first.epoch)
      return fmt::format("gang members {} and {} differ in config or epoch", to_string(first), to_string(m.unit));
    if (!workers.insert(m.worker).second)
      return fmt::format("worker {} appears twice in the gang of config {}", m.worker, first.config);
    if (!partitions.insert(m.unit.partition).second)
      return fmt::format("{} appears twice in the gang", to_string(m.unit));
    const int32_t worker_slot = worker_slots_.find(m.worker);
    if (worker_slot < 0 || !workers_[worker_slot].present) return fmt::format("unknown worker {}", m.worker);
    const WorkerEntry& worker = workers_[worker_slot];
    if (starting) {
      if (worker.running) {
        return fmt::format("worker {} is busy with {}, cannot join a gang for {}", m.worker, to_string(*worker.running),
                           to_string(m.unit));
      }
      if (m.unit.partition < 0 || m.unit.partition >= num_partitions_)
        return fmt::format("{}: partition outside 0..{}", to_string(m.unit), num_partitions_ - 1);
      if (!worker.held.contains(m.unit.partition))
        return fmt::format("{}: worker {} does not hold partition {}", to_string(m.unit), m.worker, m.unit.partition);
      if (!config.pending.contains(m.unit.partition))
        return fmt::format("{}: unit is not pending (already done or running this epoch)", to_string(m.unit));
    } else if (!worker.running || *worker.running != m.unit || !worker.in_gang) {
      return fmt::format("worker {} is not running {} in a gang", m.worker, to_string(m.unit));
    }
  }
  if (starting) {
    if (config.state != ConfigState::pending_epoch)
      return fmt::format("{}: config is {}, not pending_epoch", to_string(first), to_string(config.state));
    if (config.running_on) {
      return fmt::format("{}: config {} is busy on worker {} (isolation)", to_string(first), first.config,
                         *config.running_on);
    }
    if (first.epoch != config.epoch)
      return fmt::format("{}: config {} is in epoch {}", to_string(first), first.config, config.epoch);
  }
  return {};
}

void MopBook::check_gang(const std::vector<GangMember>& members, const char* operation, bool starting) const {
  if (auto problem = gang_problem(members, starting); !problem.empty()) misuse(operation, problem);
}

Status MopBook::can_start_gang(const std::vector<GangMember>& members) const {
  auto problem = gang_problem(members, true);
  return problem.empty() ? Status::ok_status() : Status::failed_precondition(problem);
}

void MopBook::start_gang(const std::vector<GangMember>& members) {
  check_gang(members, "start_gang", true);
  ConfigEntry& config = config_entry(members.front().unit.config, "start_gang");
  for (const GangMember& m : members) {
    WorkerEntry& worker = worker_entry(m.worker, "start_gang");
    make_not_pending(config, m.unit.partition);
    worker.running = m.unit;
    worker.in_gang = true;
    ++running_units_;
  }
  config.running_on = members.front().worker;
  config.running_count = static_cast<int32_t>(members.size());
  hot_[config.slot].busy = true;
  idle_.erase(config.slot);
}

bool MopBook::complete_gang(const std::vector<GangMember>& members) {
  check_gang(members, "complete_gang", false);
  ConfigEntry& config = config_entry(members.front().unit.config, "complete_gang");
  if (config.running_count != static_cast<int32_t>(members.size())) {
    misuse("complete_gang", fmt::format("config {} runs {} gang member(s), {} given: a gang commits whole", config.id,
                                        config.running_count, members.size()));
  }
  for (const GangMember& m : members) {
    WorkerEntry& worker = worker_entry(m.worker, "complete_gang");
    worker.running.reset();
    worker.in_gang = false;
    --running_units_;
    release_config(config);
  }
  if (is_over(config.state)) return false;  // stopped/failed while it ran
  config.units_done += static_cast<int64_t>(members.size());
  units_done_ += static_cast<int64_t>(members.size());
  if (!config.pending.empty()) return false;
  config.state = ConfigState::awaiting_decision;
  return true;
}

void MopBook::requeue_gang(const std::vector<GangMember>& members) {
  if (members.empty()) misuse("requeue_gang", "no members");
  ConfigEntry& config = config_entry(members.front().unit.config, "requeue_gang");
  for (const GangMember& m : members) {
    if (m.unit.config != config.id) {
      misuse("requeue_gang", fmt::format("{} is not of config {}", to_string(m.unit), config.id));
    }
    int32_t slot = worker_slots_.find(m.worker);
    bool running_it = slot >= 0 && workers_[slot].present && workers_[slot].running == m.unit;
    if (!running_it) continue;  // removed meanwhile: its unit is pending already
    if (!workers_[slot].in_gang) {
      misuse("requeue_gang", fmt::format("worker {} runs {} alone, not in a gang", m.worker, to_string(m.unit)));
    }
    WorkerEntry& worker = workers_[slot];
    worker.running.reset();
    worker.in_gang = false;
    --running_units_;
    release_config(config);
    if (!is_over(config.state)) make_pending(config, m.unit.partition);
  }
}

}  // namespace cerebro
