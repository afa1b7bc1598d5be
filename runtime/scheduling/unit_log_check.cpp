#include "runtime/scheduling/unit_log_check.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include <fmt/format.h>

namespace cerebro {
namespace {

std::string describe(const UnitRecord& r) {
  return fmt::format("{} on worker {} [{:g} s, {:g} s]{}", to_string(Unit{r.config, r.partition, r.epoch}), r.worker,
                     r.start_s, r.end_s,
                     r.gang ? fmt::format(" in gang {} of {}", r.gang, r.gang_size) : std::string());
}

Status check_gangs(const std::vector<const UnitRecord*>& records) {
  std::map<int64_t, std::vector<const UnitRecord*>> gangs;
  for (const UnitRecord* r : records) {
    if (r->gang == 0 && r->gang_size == 0) continue;
    if (r->gang <= 0 || r->gang_size < 2) {
      return Status::internal(fmt::format("bad gang: {} (a gang has an id > 0 and at least 2 members)", describe(*r)));
    }
    gangs[r->gang].push_back(r);
  }
  for (const auto& [id, members] : gangs) {
    const UnitRecord& first = *members.front();
    std::set<WorkerId> workers;
    for (const UnitRecord* r : members) {
      if (r->config != first.config || r->epoch != first.epoch || r->gang_size != first.gang_size ||
          r->start_s != first.start_s || r->end_s != first.end_s) {
        return Status::internal(
            fmt::format("gang {} is not one attempt: {} and {} differ in config, epoch, size or "
                        "times",
                        id, describe(first), describe(*r)));
      }
      if (!workers.insert(r->worker).second) {
        return Status::internal(fmt::format("gang {} uses worker {} twice: {}", id, r->worker, describe(*r)));
      }
    }
    if (static_cast<int32_t>(members.size()) != first.gang_size) {
      return Status::internal(fmt::format("gang {} committed {} of its {} units (a gang commits whole): {}", id,
                                          members.size(), first.gang_size, describe(first)));
    }
  }
  return Status::ok_status();
}

// One record per attempt: a gang's members after the first are left out.
std::vector<const UnitRecord*> one_per_attempt(const std::vector<const UnitRecord*>& records) {
  std::vector<const UnitRecord*> out;
  std::set<int64_t> gangs_seen;
  for (const UnitRecord* r : records) {
    if (r->gang == 0 || gangs_seen.insert(r->gang).second) out.push_back(r);
  }
  return out;
}

Status check_well_formed(const std::vector<const UnitRecord*>& records, const ExpectedRun& expected) {
  for (const UnitRecord* r : records) {
    if (!expected.epochs_completed.count(r->config)) {
      return Status::internal(fmt::format("unknown config: {} is not in the expected run", describe(*r)));
    }
    if (r->partition < 0 || r->partition >= expected.num_partitions) {
      return Status::internal(
          fmt::format("bad partition: {} is outside 0..{}", describe(*r), expected.num_partitions - 1));
    }
    if (r->epoch < 0) return Status::internal(fmt::format("bad epoch: {}", describe(*r)));
    if (r->end_s < r->start_s) {
      return Status::internal(fmt::format("bad times: {} ends before it starts", describe(*r)));
    }
    if (r->worker_end() < r->start_s || r->worker_end() > r->end_s) {
      return Status::internal(
          fmt::format("bad times: {} frees its worker at {:g} s, outside its span", describe(*r), r->worker_end()));
    }
  }
  return Status::ok_status();
}

Status check_no_duplicates(const std::vector<const UnitRecord*>& records) {
  std::map<Unit, const UnitRecord*> seen;
  for (const UnitRecord* r : records) {
    auto [it, inserted] = seen.emplace(Unit{r->config, r->partition, r->epoch}, r);
    if (!inserted) {
      return Status::internal(fmt::format("unit committed twice: {} and {}", describe(*it->second), describe(*r)));
    }
  }
  return Status::ok_status();
}

Status check_completeness(const std::vector<const UnitRecord*>& records, const ExpectedRun& expected) {
  // config -> epoch -> partitions visited (no duplicates by now)
  std::map<ConfigId, std::map<int32_t, std::set<PartitionId>>> visited;
  for (const UnitRecord* r : records) {
    int32_t completed = expected.epochs_completed.at(r->config);
    if (r->epoch > completed) {
      return Status::internal(
          fmt::format("completeness: {} ran but config {} completed only {} epoch(s), so epoch {} is unfinished",
                      describe(*r), r->config, completed, completed));
    }
    visited[r->config][r->epoch].insert(r->partition);
  }
  for (const auto& [config, completed] : expected.epochs_completed) {
    for (int32_t e = 0; e <= completed; ++e) {
      const std::set<PartitionId>& seen = visited[config][e];
      if (e < completed && static_cast<int32_t>(seen.size()) != expected.num_partitions) {
        PartitionId missing = 0;
        while (seen.count(missing)) ++missing;
        return Status::internal(
            fmt::format("completeness: config {} epoch {} is expected complete but never visited partition {} "
                        "({} of {} partitions)",
                        config, e, missing, seen.size(), expected.num_partitions));
      }
      if (e == completed && static_cast<int32_t>(seen.size()) == expected.num_partitions) {
        return Status::internal(
            fmt::format("completeness: config {} visited every partition in epoch {}, but is expected to have "
                        "completed only {} epoch(s)",
                        config, e, completed));
      }
    }
  }
  return Status::ok_status();
}

// Records grouped by key must not overlap in time (touching is fine).
template <class Key, class End>
Status check_no_overlap(const std::vector<const UnitRecord*>& records, Key key, End end, const char* invariant) {
  std::map<int32_t, std::vector<const UnitRecord*>> groups;
  for (const UnitRecord* r : records) groups[key(*r)].push_back(r);
  for (auto& [id, group] : groups) {
    std::sort(group.begin(), group.end(), [&end](const UnitRecord* a, const UnitRecord* b) {
      return std::make_pair(a->start_s, end(*a)) < std::make_pair(b->start_s, end(*b));
    });
    // Sorted by start, any overlap shows up between neighbours.
    for (size_t i = 1; i < group.size(); ++i) {
      if (end(*group[i - 1]) > group[i]->start_s) {
        return Status::internal(
            fmt::format("{}: {} overlaps {}", invariant, describe(*group[i - 1]), describe(*group[i])));
      }
    }
  }
  return Status::ok_status();
}

Status check_epoch_order(const std::vector<const UnitRecord*>& records) {
  struct Span {
    const UnitRecord* first_start = nullptr;
    const UnitRecord* last_end = nullptr;
  };
  std::map<ConfigId, std::map<int32_t, Span>> spans;
  for (const UnitRecord* r : records) {
    Span& s = spans[r->config][r->epoch];
    if (!s.first_start || r->start_s < s.first_start->start_s) s.first_start = r;
    if (!s.last_end || r->end_s > s.last_end->end_s) s.last_end = r;
  }
  // Each epoch starts no later than it ends, so checking neighbours is enough.
  for (const auto& [config, epochs] : spans) {
    const Span* previous = nullptr;
    for (const auto& [epoch, span] : epochs) {
      if (previous && previous->last_end->end_s > span.first_start->start_s) {
        return Status::internal(fmt::format("epoch order: {} ends after {} starts", describe(*previous->last_end),
                                            describe(*span.first_start)));
      }
      previous = &span;
    }
  }
  return Status::ok_status();
}

}  // namespace

Status check_mop_invariants(const std::vector<UnitRecord>& log, const ExpectedRun& expected) {
  if (expected.num_partitions < 1) {
    return Status::invalid_argument(fmt::format("expected run has {} partitions", expected.num_partitions));
  }
  for (const auto& [config, completed] : expected.epochs_completed) {
    if (completed < 0) {
      return Status::invalid_argument(fmt::format("expected run: config {} completed {} epochs", config, completed));
    }
  }
  std::vector<const UnitRecord*> committed;
  for (const UnitRecord& r : log) {
    if (r.committed) committed.push_back(&r);
  }
  if (Status s = check_well_formed(committed, expected); !s.ok()) return s;
  if (Status s = check_gangs(committed); !s.ok()) return s;
  if (Status s = check_no_duplicates(committed); !s.ok()) return s;
  if (Status s = check_completeness(committed, expected); !s.ok()) return s;
  if (Status s = check_no_overlap(
          one_per_attempt(committed), [](const UnitRecord& r) { return r.config; },
          [](const UnitRecord& r) { return r.end_s; }, "isolation");
      !s.ok()) {
    return s;
  }
  // A pipeline unit holds its stages' hosts for its span too: one record
  // per host, for this check only.
  std::vector<UnitRecord> hosted;
  for (const UnitRecord* r : committed) {
    std::set<WorkerId> crew{r->worker};
    for (WorkerId h : r->pipeline_hosts) {
      if (!crew.insert(h).second) {
        return Status::internal(fmt::format("bad pipeline crew: {} has worker {} twice", describe(*r), h));
      }
      UnitRecord copy = *r;
      copy.worker = h;
      copy.pipeline_hosts.clear();
      hosted.push_back(std::move(copy));
    }
  }
  std::vector<const UnitRecord*> occupying = committed;
  for (const UnitRecord& r : hosted) occupying.push_back(&r);
  if (Status s = check_no_overlap(
          occupying, [](const UnitRecord& r) { return r.worker; }, [](const UnitRecord& r) { return r.worker_end(); },
          "one unit per worker");
      !s.ok()) {
    return s;
  }
  return check_epoch_order(committed);
}

}  // namespace cerebro
