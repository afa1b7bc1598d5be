// ExperimentControl's data-parallel gangs and resuming from a
// unit log that may hold gang entries. Split from experiment_control.cpp to
// keep each file readable in one sitting.
#include <algorithm>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "runtime/base/status.hpp"
#include "runtime/base/contract.hpp"
#include "runtime/scheduling/experiment_control.hpp"

namespace cerebro {

void ExperimentControl::set_parallelism(Parallelism mode, GangCosts costs) {
  if (!gangs_.empty()) contract_violation("ExperimentControl::set_parallelism", "gangs are running");
  if (mode == Parallelism::mop) {
    planner_.reset();
  } else {
    planner_.emplace(mode, costs);  // costs out of range: a contract violation (GangPlanner::check)
  }
}

std::optional<int64_t> ExperimentControl::gang_of(WorkerId w) const {
  for (const auto& [id, members] : gangs_)
    for (const auto& m : members)
      if (m.worker == w) return id;
  return std::nullopt;
}

ControlEvents ExperimentControl::on_gang_committed(int64_t gang, const std::vector<UnitLogEntry>& entries,
                                                   int64_t steps, double allreduce_s) {
  auto it = gangs_.find(gang);
  if (it == gangs_.end())
    contract_violation("ExperimentControl::on_gang_committed", fmt::format("gang {} is not running", gang));
  const std::vector<MopBook::GangMember> members = it->second;
  gangs_.erase(it);
  if (planner_ && steps > 0) {
    double attempt_s = 0;  // the slowest rank's training, allreduces included
    for (const UnitLogEntry& e : entries) attempt_s = std::max(attempt_s, e.train_s);
    planner_->observe_gang(members, steps, allreduce_s, attempt_s);
  }
  return commit_gang(members, entries);
}

ControlEvents ExperimentControl::on_gang_failed(int64_t gang, const std::string& error) {
  auto it = gangs_.find(gang);
  if (it == gangs_.end()) return {};
  const std::vector<MopBook::GangMember> members = it->second;
  gangs_.erase(it);
  book_.requeue_gang(members);
  ControlEvent failed{ControlEvent::Kind::gang_failed};
  failed.config = members.front().unit.config;
  failed.epoch = members.front().unit.epoch;
  failed.attempt_id = gang;
  failed.count = static_cast<int32_t>(members.size());
  // Every unit of the attempt failed once; the config fails after
  // max_unit_retries failed attempts, which count_failure says once: that
  // is what the line keeps, else the first member's count.
  ControlEvents counted;
  for (const auto& m : members) {
    ControlEvents one = count_failure(m.unit, error);
    if (counted.empty() || (!find_event(counted, ControlEvent::Kind::config_gave_up) &&
                            find_event(one, ControlEvent::Kind::config_gave_up)))
      counted = std::move(one);
  }
  ControlEvents out{failed};
  out.insert(out.end(), counted.begin(), counted.end());
  return out;
}

void ExperimentControl::start_gang(const std::vector<MopBook::GangMember>& members, DispatchBatch& out) {
  book_.start_gang(members);  // a contract violation if the plan is not a valid gang
  GangDispatch g;
  g.id = ++next_gang_;
  const bool ends_epoch = book_.pending_partitions(members.front().unit.config).empty();
  for (const auto& m : members) {
    g.members.push_back(make_dispatch(m.worker, m.unit));
    g.attempt = std::max(g.attempt, g.members.back().attempt);
  }
  // Every rank validates its share of the gang's state; rank 0 reports it.
  for (auto& d : g.members) d.validate = ends_epoch;
  gangs_[g.id] = members;
  out.gangs.push_back(std::move(g));
}

Status ExperimentControl::set_recorded_gangs(const std::vector<std::vector<Unit>>& gangs) {
  recorded_gangs_.clear();
  for (const auto& units : gangs) {
    if (units.size() < 2) {
      recorded_gangs_.clear();
      return Status::invalid_argument(fmt::format("a recorded gang of {} unit(s)", units.size()));
    }
    for (const Unit& u : units)
      if (u.config != units.front().config || u.epoch != units.front().epoch) {
        recorded_gangs_.clear();
        return Status::invalid_argument(
            fmt::format("a recorded gang of {} and {}", to_string(units.front()), to_string(u)));
      }
    auto shared = std::make_shared<const std::vector<Unit>>(units);
    for (const Unit& u : units) recorded_gangs_[u] = shared;
  }
  return Status::ok_status();
}

std::optional<std::vector<MopBook::GangMember>> ExperimentControl::recorded_gang_for(
    WorkerId w, const Unit& u, const std::vector<WorkerId>& idle) const {
  auto it = recorded_gangs_.find(u);
  if (it == recorded_gangs_.end()) return std::nullopt;
  std::vector<MopBook::GangMember> members;
  std::set<WorkerId> taken{w};
  for (const Unit& member : *it->second) {
    if (member == u) {
      members.push_back({w, u});
      continue;
    }
    std::optional<WorkerId> holder;
    for (WorkerId other : idle) {
      if (taken.count(other) || !book_.has_worker(other) || book_.worker_busy(other) || pipelines_.attempt_of(other))
        continue;
      if (book_.holds(other, member.partition)) {
        holder = other;
        break;
      }
    }
    if (!holder) return std::vector<MopBook::GangMember>{};  // not yet: w waits
    taken.insert(*holder);
    members.push_back({*holder, member});
  }
  return members;
}

ControlEvents ExperimentControl::fail_gang_of(WorkerId w, const std::string& error) {
  auto gang = gang_of(w);
  if (!gang) return {};
  return on_gang_failed(*gang, error);
}

Result<ExperimentControl::Restored> ExperimentControl::restore(const std::vector<UnitLogEntry>& log) {
  // Workers of the past that hold every partition run the logged units: one
  // for units alone, a gang's size for a gang's.
  constexpr WorkerId kReplayWorker = std::numeric_limits<WorkerId>::min();
  std::vector<PartitionId> all(static_cast<size_t>(book_.num_partitions()));
  for (PartitionId p = 0; p < book_.num_partitions(); ++p) all[static_cast<size_t>(p)] = p;
  std::vector<WorkerId> replay_workers;
  auto replay_worker = [&](size_t i) {
    while (replay_workers.size() <= i) {
      WorkerId w = kReplayWorker + static_cast<WorkerId>(replay_workers.size());
      book_.add_worker(w, all);
      replay_workers.push_back(w);
    }
    return replay_workers[i];
  };
  auto check = [&](const UnitLogEntry& e) {
    if (!book_.has_config(e.config))
      return Status::invalid_argument(
          fmt::format("cannot resume: the unit log has {} (seq {}) but config {} is not in the schedule",
                      to_string(Unit{e.config, e.partition, e.epoch}), e.seq, e.config));
    if (copy_pending(e.config)) on_state_copied(e.config);
    const auto state = book_.state(e.config);
    if (state != ConfigState::pending_epoch || book_.epoch(e.config) != e.epoch)
      return Status::invalid_argument(fmt::format(
          "cannot resume: the unit log has {} (seq {}) but config {} is {} in epoch {}",
          to_string(Unit{e.config, e.partition, e.epoch}), e.seq, e.config, to_string(state), book_.epoch(e.config)));
    return Status::ok_status();
  };
  // A refused log leaves the book as far as it got: the caller gives the run
  // up (or the replay workers would stay in it).
  auto refuse = [&](Status why) {
    for (WorkerId w : replay_workers) book_.remove_worker(w);
    return why;
  };
  Restored restored;
  for (size_t i = 0; i < log.size();) {
    const UnitLogEntry& e = log[i];
    // A gang's entries are consecutive (one batch) and share its id; one
    // left alone (the others rolled back) counts as a unit alone.
    size_t end = i + 1;
    while (e.gang > 0 && end < log.size() && log[end].gang == e.gang) ++end;
    if (auto fits = check(e); !fits.ok()) return refuse(fits);
    if (end - i >= 2) {
      std::vector<MopBook::GangMember> members;
      std::vector<UnitLogEntry> entries(log.begin() + static_cast<std::ptrdiff_t>(i),
                                        log.begin() + static_cast<std::ptrdiff_t>(end));
      for (size_t r = 0; r < entries.size(); ++r)
        members.push_back({replay_worker(r), Unit{entries[r].config, entries[r].partition, entries[r].epoch}});
      // The book's misuse aborts: ask it first.
      if (auto fits = book_.can_start_gang(members); !fits.ok()) {
        return refuse(
            Status::invalid_argument(fmt::format("cannot resume: the unit log's gang {} (seq {}) contradicts MOP: "
                                                 "MopBook::start_gang: {}",
                                                 e.gang, e.seq, fits.message())));
      }
      book_.start_gang(members);
      commit_gang(members, entries);
    } else {
      const WorkerId w = replay_worker(0);
      const Unit unit{e.config, e.partition, e.epoch};
      if (auto fits = book_.can_start(w, unit); !fits.ok()) {  // the book's misuse aborts: ask it first
        return refuse(Status::invalid_argument(
            fmt::format("cannot resume: the unit log's {} (seq {}) contradicts MOP: MopBook::start: {}",
                        to_string(unit), e.seq, fits.message())));
      }
      book_.start(w, unit);
      commit(w, e);
    }
    restored.units += static_cast<int64_t>(end - i);
    i = end;
  }
  for (WorkerId w : replay_workers) book_.remove_worker(w);
  restored.decisions = take_decisions();
  std::vector<StateCopy> still_pending;
  for (auto& copy : copies_)
    if (copy_pending(copy.to)) still_pending.push_back(std::move(copy));
  copies_ = std::move(still_pending);
  return restored;
}

ControlEvents ExperimentControl::commit_gang(const std::vector<MopBook::GangMember>& members,
                                             const std::vector<UnitLogEntry>& entries) {
  // The shell commits what the gang ran (restore builds the members from
  // the entries): other entries are its bug.
  if (entries.size() != members.size())
    contract_violation("ExperimentControl::commit_gang",
                       fmt::format("gang of config {}: {} members but {} log entries", members.front().unit.config,
                                   members.size(), entries.size()));
  for (size_t r = 0; r < entries.size(); ++r) {
    const Unit logged{entries[r].config, entries[r].partition, entries[r].epoch};
    if (logged != members[r].unit)
      contract_violation("ExperimentControl::commit_gang",
                         fmt::format("gang of config {}: entry {} is {}, the member ran {}",
                                     members.front().unit.config, r, to_string(logged), to_string(members[r].unit)));
    account(entries[r]);
  }
  bool epoch_ended = book_.complete_gang(members);
  // One state for all: the entry that validated carries the epoch's result.
  const UnitLogEntry* result = &entries.back();
  bool diverged = false;
  for (const auto& e : entries) {
    if (e.has_validation) result = &e;
    diverged = diverged || e.status == UnitStatus::diverged;
  }
  for (const auto& e : entries)
    if (e.status == UnitStatus::diverged) result = &e;
  return conclude(*result, diverged, epoch_ended);
}

}  // namespace cerebro
