// Choosing a pipeline attempt's workers and tracking the attempts (see
// pipeline_dispatch.hpp).
#include "runtime/scheduling/pipeline_dispatch.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "runtime/base/contract.hpp"
#include "runtime/base/status.hpp"

namespace cerebro {

std::vector<WorkerId> PipelineCrew::members() const {
  std::vector<WorkerId> out{driver};
  out.insert(out.end(), hosts.begin(), hosts.end());
  return out;
}

std::optional<PipelineCrew> choose_pipeline_crew(const Unit& unit, int stages, const std::vector<WorkerId>& idle,
                                                 const std::function<bool(WorkerId, PartitionId)>& holds,
                                                 const std::function<int64_t(WorkerId)>& runnable_units) {
  if (stages < 2 || static_cast<int>(idle.size()) < stages) return std::nullopt;
  auto driver = std::find_if(idle.begin(), idle.end(), [&](WorkerId w) { return holds(w, unit.partition); });
  if (driver == idle.end()) return std::nullopt;
  struct Candidate {
    int64_t runnable;
    size_t order;
    WorkerId worker;
  };
  std::vector<Candidate> others;
  for (size_t i = 0; i < idle.size(); ++i)
    if (idle[i] != *driver) others.push_back({runnable_units(idle[i]), i, idle[i]});
  std::sort(others.begin(), others.end(), [](const Candidate& a, const Candidate& b) {
    return a.runnable != b.runnable ? a.runnable < b.runnable : a.order < b.order;
  });
  PipelineCrew crew;
  crew.unit = unit;
  crew.driver = *driver;
  for (int s = 1; s < stages; ++s) crew.hosts.push_back(others[static_cast<size_t>(s - 1)].worker);
  return crew;
}

std::string pipeline_label(const PipelineCrew& crew) {
  return fmt::format("pipeline over {} stages (workers {})", crew.stages(), fmt::join(crew.members(), ", "));
}

CrewOutlook crew_outlook(int stages, int workers_now, int fixed_workers) {
  if (fixed_workers > 0 && stages > fixed_workers) return CrewOutlook::cannot_form;
  if (stages > workers_now) return CrewOutlook::waits_for_workers;
  return CrewOutlook::can_form;
}

std::string crew_wait_message(ConfigId config, int stages, int workers) {
  return fmt::format("config {} waits for {} idle workers for its pipeline stages; the cluster has {}", config, stages,
                     workers);
}

std::string crew_shortage_error(int stages, int workers) {
  return fmt::format("it trains as a pipeline over {} stages, but the cluster has {} worker{} and no more can join",
                     stages, workers, workers == 1 ? "" : "s");
}

int64_t PipelineAttempts::start(PipelineCrew crew) {
  if (crew.stages() < 2)
    contract_violation(
        "PipelineAttempts::start",
        fmt::format("a pipeline attempt of {} needs at least 2 stages, got {}", to_string(crew.unit), crew.stages()));
  const auto members = crew.members();
  std::set<WorkerId> seen;
  for (WorkerId w : members) {
    if (!seen.insert(w).second)
      contract_violation("PipelineAttempts::start",
                         fmt::format("worker {} appears twice in the pipeline attempt of {}", w, to_string(crew.unit)));
    if (auto other = attempt_of(w))
      contract_violation("PipelineAttempts::start",
                         fmt::format("worker {} is in pipeline attempt {} already, cannot join one for {}", w, *other,
                                     to_string(crew.unit)));
  }
  const int64_t id = next_++;
  for (WorkerId w : members) member_of_[w] = id;
  attempts_.emplace(id, std::move(crew));
  return id;
}

std::optional<int64_t> PipelineAttempts::attempt_of(WorkerId w) const {
  auto it = member_of_.find(w);
  if (it == member_of_.end()) return std::nullopt;
  return it->second;
}

const PipelineCrew& PipelineAttempts::crew(int64_t attempt) const {
  auto it = attempts_.find(attempt);
  if (it == attempts_.end())
    contract_violation("PipelineAttempts::crew", fmt::format("pipeline attempt {} is not running", attempt));
  return it->second;
}

PipelineCrew PipelineAttempts::finish(int64_t attempt) {
  auto it = attempts_.find(attempt);
  if (it == attempts_.end())
    contract_violation("PipelineAttempts::finish", fmt::format("pipeline attempt {} is not running", attempt));
  PipelineCrew crew = std::move(it->second);
  attempts_.erase(it);
  for (WorkerId w : crew.members()) member_of_.erase(w);
  return crew;
}

}  // namespace cerebro
