// The simulator's data-parallel gangs (--parallelism auto|data):
// the planner (runtime/scheduling/gang_planner.hpp) may turn a unit a worker
// chose into a gang of waiting holders; a gang ends or fails as one.
#include <algorithm>
#include <cmath>
#include <random>

#include "runtime/sim/simulator_run.hpp"

namespace cerebro {

std::vector<WorkerId> Simulator::Run::gang_candidates(WorkerId w, ConfigId c) {
  std::vector<WorkerId> out;
  if (waiting_partitions_.empty()) return out;
  size_t enough = static_cast<size_t>(options_.max_gang) * 2;
  book_.pending_set(c).for_each_common(waiting_partitions_, [&](PartitionId p) {
    if (out.size() >= enough) return;
    for (WorkerId h : holders_.of(p)) {
      if (h != w && waiting_[h] && std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
    }
  });
  return out;
}

bool Simulator::Run::start_gang(WorkerId w, const Unit& u) {
  std::vector<WorkerId> candidates = gang_candidates(w, u.config);
  if (candidates.empty()) return false;
  std::vector<MopBook::GangMember> members = planner_->plan(w, u, candidates, book_);
  if (members.empty()) return false;
  book_.start_gang(members);  // a contract violation if the plan is not a valid gang
  auto k = static_cast<int32_t>(members.size());
  double slowest = 0;
  for (const MopBook::GangMember& m : members) {
    set_waiting(m.worker, false);
    slowest = std::max(slowest, workload_.unit_seconds(u.config, m.worker));
  }
  if (options_.noise > 0) slowest *= 1 + std::uniform_real_distribution<double>(0, options_.noise)(rng_);
  double duration = gang_seconds(slowest, k, planner_->costs());
  int64_t gang = ++gang_count_;
  for (const MopBook::GangMember& m : members) attempts_[m.worker] = Attempt{m.unit, now_, duration, gang};
  gang_members_[w] = members;
  // A gang fails when any member does: 1 - (1 - rate)^k per attempt.
  double fail_p = 1 - std::pow(1 - options_.failure_rate, k);
  if (options_.failure_rate > 0 && std::bernoulli_distribution(fail_p)(rng_)) {
    push(now_ + duration * std::uniform_real_distribution<double>(0, 1)(rng_), w, EventKind::worker_fails);
  } else {
    push(now_ + duration, w, EventKind::unit_ends);
  }
  return true;
}

std::vector<MopBook::GangMember> Simulator::Run::take_gang(WorkerId leader, Attempt& attempt) {
  std::vector<MopBook::GangMember> members;
  members.swap(gang_members_[leader]);
  attempt = attempts_[leader];
  busy_s_ += (now_ - attempt.start_s) * static_cast<double>(members.size());
  return members;
}

void Simulator::Run::gang_ends(WorkerId leader) {
  Attempt a;
  const std::vector<MopBook::GangMember> members = take_gang(leader, a);
  auto k = static_cast<int32_t>(members.size());
  report_.makespan_s = std::max(report_.makespan_s, now_);
  for (const MopBook::GangMember& m : members) record(m.worker, attempts_[m.worker], true, k);
  ++report_.gangs;
  report_.gang_units += k;
  // What a real gang measures: its allreduce per step.
  planner_->observe_allreduce(k, planner_->costs().allreduce_s * 2.0 * (k - 1) / k);
  if (book_.complete_gang(members)) epoch_ended(a.unit.config);
  for (const MopBook::GangMember& m : members) offer_or_wait(m.worker);
  wake_for(a.unit.config);
}

void Simulator::Run::gang_fails(WorkerId leader) {
  Attempt a;
  const std::vector<MopBook::GangMember> members = take_gang(leader, a);
  auto k = static_cast<int32_t>(members.size());
  for (const MopBook::GangMember& m : members) record(m.worker, attempts_[m.worker], false, k);
  ++report_.failed_attempts;
  WorkerId failed = members[std::uniform_int_distribution<size_t>(0, members.size() - 1)(rng_)].worker;
  book_.remove_worker(failed);
  book_.requeue_gang(members);
  push(now_ + options_.downtime_s, failed, EventKind::worker_returns);
  for (const MopBook::GangMember& m : members) {
    if (m.worker != failed) offer_or_wait(m.worker);
  }
  wake_for(a.unit.config);
}

}  // namespace cerebro
