#include "runtime/scheduling/worker_roster.hpp"

#include <algorithm>

namespace cerebro {

bool WorkerRoster::join(WorkerId w, std::vector<PartitionId> holds) {
  if (!present_.insert(w).second) return false;
  control_.add_worker(w, std::move(holds));
  return true;
}

bool WorkerRoster::holds(WorkerId w, std::vector<PartitionId> holds) {
  if (!has(w)) return false;
  if (auto it = draining_.find(w); it != draining_.end()) {
    it->second = std::move(holds);  // it rejoins with these once out of its failed gang
    return false;
  }
  control_.add_worker(w, std::move(holds));
  return true;
}

std::optional<WorkerRoster::Leave> WorkerRoster::lose(WorkerId w, std::string why, bool unit_failed) {
  if (!present_.erase(w)) return std::nullopt;
  Leave leave{w, std::move(why), unit_failed};
  if (committing(w)) {
    leaving_[w] = std::move(leave);
    return std::nullopt;
  }
  return leave;
}

std::optional<int64_t> WorkerRoster::leaving(WorkerId w) {
  draining_.erase(w);
  auto gang = control_.gang_of(w);
  if (gang && attempts_.count(*gang)) return gang;
  return std::nullopt;
}

bool WorkerRoster::member_left(int64_t gang, WorkerId w) {
  auto it = attempts_.find(gang);
  if (it == attempts_.end()) return false;
  auto& a = it->second;
  for (size_t rank = 0; rank < a.members.size(); ++rank)
    if (a.members[rank] == w) a.replied[rank] = true;  // it never will
  return fail_gang(gang);
}

bool WorkerRoster::runs(WorkerId w, const Unit& u) const {
  const auto& book = control_.book();
  if (!has(w) || !book.has_worker(w)) return false;
  auto running = book.running_on(w);
  return running && *running == u;
}

bool WorkerRoster::stranded() const {
  return present_.empty() && committing_.empty() && control_.book().handed_over_units() == 0 && !control_.all_done();
}

void WorkerRoster::commit_started(const std::vector<WorkerId>& workers) {
  committing_.insert(workers.begin(), workers.end());
}

std::vector<WorkerRoster::Leave> WorkerRoster::commit_answered(const std::vector<WorkerId>& workers) {
  std::vector<Leave> out;
  for (auto w : workers) {
    committing_.erase(w);
    if (auto it = leaving_.find(w); it != leaving_.end()) {
      out.push_back(std::move(it->second));
      leaving_.erase(it);
    }
  }
  return out;
}

void WorkerRoster::gang_started(const GangDispatch& gang) {
  Attempt a;
  for (const auto& d : gang.members) a.members.push_back(d.worker);
  a.replied.assign(a.members.size(), false);
  a.good.assign(a.members.size(), false);
  attempts_[gang.id] = std::move(a);
}

bool WorkerRoster::gang_begins(const GangDispatch& gang) {
  if (control_.gang_running(gang.id)) return true;
  // Failed before its tasks went out: its members drained as if inside it are not.
  none_tasked(gang.id);
  for (const auto& d : gang.members) rejoin(d.worker);
  return false;
}

void WorkerRoster::none_tasked(int64_t gang) {
  if (auto it = attempts_.find(gang); it != attempts_.end()) it->second.replied.assign(it->second.replied.size(), true);
}

WorkerRoster::GangReply WorkerRoster::replied(const GangDispatch& gang, size_t rank, bool ok) {
  GangReply out;
  auto it = attempts_.find(gang.id);
  if (it != attempts_.end()) it->second.replied.at(rank) = true;
  // Out of a failed attempt at last: back in the schedule.
  out.rejoined = rejoin(gang.members.at(rank).worker);
  if (it == attempts_.end()) return out;
  if (!control_.gang_running(gang.id)) {
    fail_gang(gang.id);
    out.next = GangStep::drain;
    return out;
  }
  if (!ok) {
    out.next = GangStep::fail;
    return out;
  }
  it->second.good[rank] = true;
  const auto& good = it->second.good;
  out.next = std::all_of(good.begin(), good.end(), [](bool g) { return g; }) ? GangStep::commit : GangStep::wait;
  return out;
}

bool WorkerRoster::fail_gang(int64_t gang) {
  auto it = attempts_.find(gang);
  if (it == attempts_.end()) return false;
  Attempt a = std::move(it->second);
  attempts_.erase(it);
  const auto& book = control_.book();
  for (size_t rank = 0; rank < a.members.size(); ++rank) {
    const WorkerId w = a.members[rank];
    if (a.replied[rank] || !has(w) || !book.has_worker(w)) continue;
    if (book.worker_busy(w)) continue;  // cannot be: nothing was dispatched since the failure
    draining_[w] = book.holdings(w);
    control_.remove_worker(w);
  }
  return true;
}

std::vector<WorkerId> WorkerRoster::commit_gang(int64_t gang) {
  auto it = attempts_.find(gang);
  if (it == attempts_.end()) return {};
  auto members = std::move(it->second.members);
  attempts_.erase(it);
  commit_started(members);
  return members;
}

bool WorkerRoster::rejoin(WorkerId w) {
  auto it = draining_.find(w);
  if (it == draining_.end()) return false;
  auto holds = std::move(it->second);
  draining_.erase(it);
  if (has(w)) control_.add_worker(w, std::move(holds));
  return true;
}

}  // namespace cerebro
